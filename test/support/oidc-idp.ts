import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface IdpAccount {
  email?: string;
  email_verified?: boolean | string;
  name?: string;
  preferred_username?: string;
}

export interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface TestIdp {
  issuer: string;
  /** Accounts by subject; tests add and change them freely. */
  accounts: Map<string, IdpAccount>;
  /**
   * Plays the browser: follows the authorization URL, signs in as `subject` at the login interaction,
   * and returns the query of the final redirect to Hearth's redirect URI (`code`, `state`, or `error`).
   */
  authorize(authorizationUrl: string, subject: string): Promise<URLSearchParams>;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (`oidc-provider`) on loopback with PKCE required and consent granted
 * automatically for the registered clients, so a test drives the whole browser part over plain HTTP.
 */
export async function startTestIdp(clients: IdpClient[], redirectUri: string): Promise<TestIdp> {
  const accounts = new Map<string, IdpAccount>();
  let provider!: Provider;
  const server: Server = createServer((req, res) => {
    const match = /^\/interaction\/([^/?]+)\/login\?account=([^&]+)$/.exec(req.url ?? '');
    if (match) {
      finishLogin(req, res, decodeURIComponent(match[2] as string)).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-idp-key', alg: 'RS256', use: 'sig' };
  const ttl = { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 };
  provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    ttl,
    clients: clients.map((client) => ({
      ...client,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    pkce: { methods: ['S256'], required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['hearth-test-idp-cookie-key'] },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
    // First-party test clients: every requested scope is granted without a consent screen.
    async loadExistingGrant(ctx: any) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  } as any);
  // Silence the development-keys and similar warnings of the library.
  provider.on('server_error', () => {});

  async function finishLogin(req: IncomingMessage, res: ServerResponse, accountId: string) {
    await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
  }

  async function authorize(authorizationUrl: string, subject: string): Promise<URLSearchParams> {
    const cookies = new Map<string, string>();
    let next = authorizationUrl;
    for (let hop = 0; hop < 10; hop++) {
      if (next.startsWith(redirectUri)) return new URL(next).searchParams;
      const res = await fetch(next, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`IdP stopped at ${res.status}: ${(await res.text()).slice(0, 300)}`);
      await res.arrayBuffer().catch(() => {});
      const target = new URL(location, next);
      const interaction = /^\/interaction\/([^/]+)$/.exec(target.pathname);
      next = interaction
        ? `${issuer}/interaction/${interaction[1]}/login?account=${encodeURIComponent(subject)}`
        : target.toString();
    }
    throw new Error('too many redirects at the IdP');
  }

  return {
    issuer,
    accounts,
    authorize,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
