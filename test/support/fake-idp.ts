import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

export interface TokenRequest {
  form: URLSearchParams;
  authorization: string | undefined;
}

export interface FakeIdp {
  issuer: string;
  /** Claims of the next ID token, merged over sane defaults (iss, aud, sub, iat, exp). */
  mint: (claims: JWTPayload) => void;
  /** Sign the next ID token with a key that is not in the published JWKS. */
  signWithForeignKey: (on: boolean) => void;
  tokenRequests: TokenRequest[];
  /** Every TCP connection the server accepted (to prove that a refused request never connected). */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A minimal, test-controlled OpenID provider: discovery, JWKS, token and userinfo endpoints whose ID
 * tokens the test shapes claim by claim (wrong audience, issuer, expiry, key), which a conforming
 * provider would never produce.
 */
export async function startFakeIdp(clientId: string): Promise<FakeIdp> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let nextClaims: JWTPayload = {};
  let foreignKey = false;
  let connections = 0;
  const tokenRequests: TokenRequest[] = [];
  let issuer = '';

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const path = (req.url ?? '').split('?')[0];
    if (path === '/.well-known/openid-configuration')
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/userinfo`,
        jwks_uri: `${issuer}/jwks`,
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
      });
    if (path === '/jwks') return json(200, { keys: [jwk] });
    if (path === '/token' && req.method === 'POST') {
      tokenRequests.push({ form: new URLSearchParams(body), authorization: req.headers.authorization });
      const now = Math.floor(Date.now() / 1000);
      const claims: JWTPayload = {
        iss: issuer,
        aud: clientId,
        sub: 'fake-subject',
        iat: now,
        exp: now + 300,
        ...nextClaims,
      };
      const idToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .sign(foreignKey ? foreign.privateKey : privateKey);
      return json(200, { access_token: 'fake-access-token', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    if (path === '/userinfo') return json(200, { sub: nextClaims.sub ?? 'fake-subject' });
    json(404, { error: 'not_found' });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    mint: (claims) => {
      nextClaims = claims;
    },
    signWithForeignKey: (on) => {
      foreignKey = on;
    },
    tokenRequests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
