import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { adminUser } from '../support/admin.ts';
import { type ApiResponse, harness, registerUser, request, uniqueEmail } from '../support/client.ts';
import { emailsTo } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** What the fake provider does with the next siteverify request. */
type Mode = 'answer' | 'hang' | 'http-500' | 'not-json' | 'string-success' | 'reset';

interface VerifyCall {
  path: string;
  contentType: string | undefined;
  form: Record<string, string>;
}

/**
 * A local stand-in for hCaptcha's and Turnstile's siteverify API (both speak the same protocol): a
 * form-encoded POST of `secret`, `response`, `remoteip`; JSON `{success:true}` for the token `good`,
 * `{success:false, "error-codes":[…]}` otherwise, unless a failure mode is switched on.
 */
class FakeSiteverify {
  readonly calls: VerifyCall[] = [];
  mode: Mode = 'answer';
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let data = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        data += chunk;
      });
      req.on('end', () => {
        this.calls.push({
          path: req.url ?? '',
          contentType: req.headers['content-type'],
          form: Object.fromEntries(new URLSearchParams(data)),
        });
        const form = Object.fromEntries(new URLSearchParams(data));
        switch (this.mode) {
          case 'hang':
            return;
          case 'reset':
            req.socket.destroy();
            return;
          case 'http-500':
            res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":true}');
            return;
          case 'not-json':
            res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
            return;
          case 'string-success':
            res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":"true"}');
            return;
          default: {
            const ok = form.response === 'good' && form.secret === SECRET;
            const body = ok
              ? { success: true, challenge_ts: new Date().toISOString(), hostname: 'localhost' }
              : {
                  success: false,
                  'error-codes': [form.secret === SECRET ? 'invalid-input-response' : 'invalid-input-secret'],
                };
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
          }
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const SECRET = '0x0000000000000000000000000000000000000000';
const SITE_KEYS = { hcaptcha: '10000000-ffff-ffff-ffff-000000000001', turnstile: '1x00000000000000000000AA' };
const PROXY = { HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' };

const fake = new FakeSiteverify();
before(async () => {
  await fake.start();
});
after(async () => {
  await fake.stop();
});

let ipCounter = 0;
/** Strict requests from a fresh documentation address each time, so the per-IP allowances never interfere. */
function strictFrom(extra: Record<string, string> = {}): { ip: string; headers: Record<string, string> } {
  ipCounter += 1;
  const ip = `203.0.113.${ipCounter % 250}`;
  return { ip, headers: { 'x-test-strict': 'true', 'x-forwarded-for': ip, ...extra } };
}

const OPERATIONS = [
  { name: 'register', path: '/v1/auth/register' },
  { name: 'login', path: '/v1/auth/login' },
  { name: 'forgot', path: '/v1/auth/forgot' },
] as const;

function bodyFor(operation: (typeof OPERATIONS)[number]['name']): Record<string, string> {
  const email = uniqueEmail('captcha');
  if (operation === 'register') return { email, password: `pw-${randomBytes(8).toString('hex')}` };
  if (operation === 'login') return { email, password: 'not-the-password' };
  return { email };
}

function assertCode(res: ApiResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code, res.text);
}

for (const provider of ['hcaptcha', 'turnstile'] as const) {
  describe(`CAPTCHA with ${provider}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        HEARTH_CAPTCHA_PROVIDER: provider,
        HEARTH_CAPTCHA_SECRET: SECRET,
        [provider === 'hcaptcha' ? 'HEARTH_HCAPTCHA_SITE_KEY' : 'HEARTH_TURNSTILE_SITE_KEY']: SITE_KEYS[provider],
        HEARTH_CAPTCHA_VERIFY_URL: `${fake.url}/${provider}/siteverify`,
        HEARTH_CAPTCHA_TIMEOUT_MS: '500',
        ...PROXY,
      });
    });
    after(async () => {
      await server?.close();
    });
    beforeEach(async () => {
      fake.mode = 'answer';
      fake.calls.length = 0;
      await harness(server, 'POST', '/rate-limits/reset');
    });

    it('announces the provider and its site key in discovery and the Admin instance config', async () => {
      const expected = {
        provider,
        hcaptcha_site_key: provider === 'hcaptcha' ? SITE_KEYS.hcaptcha : null,
        turnstile_site_key: provider === 'turnstile' ? SITE_KEYS.turnstile : null,
      };
      const discovery = await request(server, 'GET', '/.well-known/service');
      assert.equal(discovery.status, 200);
      assert.deepEqual(discovery.body.captcha, expected);
      assert.ok(!discovery.text.includes(SECRET));

      const admin = await adminUser(server, ['*']);
      const config = await request(server, 'POST', '/v1/admin/instance-config/get', { auth: admin.token });
      assert.equal(config.status, 200, config.text);
      assert.deepEqual(config.body.captcha, expected);
      assert.ok(!config.text.includes(SECRET));
    });

    for (const op of OPERATIONS) {
      it(`${op.name}: a missing token is 400 CAPTCHA_REQUIRED without asking the provider`, async () => {
        const res = await request(server, 'POST', op.path, { body: bodyFor(op.name), headers: strictFrom().headers });
        assertCode(res, 400, 'CAPTCHA_REQUIRED');
        const empty = await request(server, 'POST', op.path, {
          body: bodyFor(op.name),
          headers: strictFrom({ 'x-captcha-token': '' }).headers,
        });
        assertCode(empty, 400, 'CAPTCHA_REQUIRED');
        assert.equal(fake.calls.length, 0);
      });

      it(`${op.name}: a token the provider rejects is 400 INVALID_CAPTCHA; the provider got secret, response and remoteip`, async () => {
        const { ip, headers } = strictFrom({ 'x-captcha-token': 'wrong-token', 'x-captcha-type': provider });
        const res = await request(server, 'POST', op.path, { body: bodyFor(op.name), headers });
        assertCode(res, 400, 'INVALID_CAPTCHA');
        assert.equal(fake.calls.length, 1);
        const call = fake.calls[0] as VerifyCall;
        assert.equal(call.path, `/${provider}/siteverify`);
        assert.equal(call.contentType, 'application/x-www-form-urlencoded');
        assert.deepEqual(call.form, { secret: SECRET, response: 'wrong-token', remoteip: ip });
      });
    }

    it('a good token lets register, login and forgot through', async () => {
      const good = () => strictFrom({ 'x-captcha-token': 'good' });
      const from = good();
      const email = uniqueEmail('captcha-ok');
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const registered = await request(server, 'POST', '/v1/auth/register', {
        body: { email, password },
        headers: from.headers,
      });
      assert.equal(registered.status, 200, registered.text);
      assert.match(registered.body.token, /^flx_[A-Za-z0-9]{36}$/);

      // Same address as the registration, so IP authorisation has nothing to ask.
      const loggedIn = await request(server, 'POST', '/v1/auth/login', {
        body: { email, password },
        headers: { ...from.headers, 'x-captcha-type': provider },
      });
      assert.equal(loggedIn.status, 200, loggedIn.text);
      assert.equal(loggedIn.body.user_id, registered.body.user_id);

      const forgot = await request(server, 'POST', '/v1/auth/forgot', { body: { email }, headers: good().headers });
      assert.equal(forgot.status, 204, forgot.text);
      assert.equal((await emailsTo(server, email, 'password_reset')).length, 1);

      assert.equal(fake.calls.length, 3);
      assert.ok(fake.calls.every((call) => call.form.response === 'good' && call.form.secret === SECRET));
    });

    it('a token labelled with another provider is INVALID_CAPTCHA without asking the provider', async () => {
      const other = provider === 'hcaptcha' ? 'turnstile' : 'hcaptcha';
      for (const type of [other, 'recaptcha']) {
        const res = await request(server, 'POST', '/v1/auth/forgot', {
          body: bodyFor('forgot'),
          headers: strictFrom({ 'x-captcha-token': 'good', 'x-captcha-type': type }).headers,
        });
        assertCode(res, 400, 'INVALID_CAPTCHA');
      }
      assert.equal(fake.calls.length, 0);
    });

    it('a credential that resolves waives the CAPTCHA on all three operations', async () => {
      const user = await registerUser(server);
      for (const auth of [user.token, `Bearer ${user.token}`]) {
        const register = await request(server, 'POST', '/v1/auth/register', {
          auth,
          body: bodyFor('register'),
          headers: strictFrom().headers,
        });
        assert.equal(register.status, 200, register.text);
        const login = await request(server, 'POST', '/v1/auth/login', {
          auth,
          body: bodyFor('login'),
          headers: strictFrom().headers,
        });
        // Past the CAPTCHA: the handler judged the (wrong) password.
        assertCode(login, 400, 'INVALID_FORM_BODY');
        assert.equal(login.body.errors[0].code, 'INVALID_EMAIL_OR_PASSWORD');
        const forgot = await request(server, 'POST', '/v1/auth/forgot', {
          auth,
          body: bodyFor('forgot'),
          headers: strictFrom().headers,
        });
        assert.equal(forgot.status, 204, forgot.text);
      }
      assert.equal(fake.calls.length, 0);
    });

    it('a credential that does not resolve waives nothing', async () => {
      const user = await registerUser(server);
      const loggedOut = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: user.password },
      });
      assert.equal(loggedOut.status, 200, loggedOut.text);
      assert.equal((await request(server, 'POST', '/v1/auth/logout', { auth: loggedOut.body.token })).status, 204);
      const unknown = `flx_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'a').slice(0, 36)}`;
      for (const auth of [unknown, loggedOut.body.token, 'Basic abc', 'Bot 1.x']) {
        for (const op of OPERATIONS) {
          const res = await request(server, 'POST', op.path, {
            auth,
            body: bodyFor(op.name),
            headers: strictFrom().headers,
          });
          assertCode(res, 400, 'CAPTCHA_REQUIRED');
        }
      }
    });

    it('test mode without X-Test-Strict asks for no CAPTCHA', async () => {
      const email = uniqueEmail('lenient');
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const register = await request(server, 'POST', '/v1/auth/register', { body: { email, password } });
      assert.equal(register.status, 200, register.text);
      const login = await request(server, 'POST', '/v1/auth/login', { body: { email, password } });
      assert.equal(login.status, 200, login.text);
      const forgot = await request(server, 'POST', '/v1/auth/forgot', {
        body: { email },
        headers: { 'x-test-strict': 'false', 'x-captcha-token': 'wrong-token' },
      });
      assert.equal(forgot.status, 204, forgot.text);
      assert.equal(fake.calls.length, 0);
    });

    it('other unauthenticated routes ask for no CAPTCHA', async () => {
      const verify = await request(server, 'POST', '/v1/auth/verify', {
        body: { token: 'x'.repeat(64) },
        headers: strictFrom().headers,
      });
      assertCode(verify, 400, 'INVALID_FORM_BODY');
      const reset = await request(server, 'GET', `/v1/auth/reset/${'x'.repeat(64)}`, { headers: strictFrom().headers });
      assert.equal(reset.status, 200);
      assert.deepEqual(reset.body, { valid: false });
    });

    it('validation runs only after the CAPTCHA', async () => {
      const res = await request(server, 'POST', '/v1/auth/forgot', {
        body: { email: 'not-an-address' },
        headers: strictFrom().headers,
      });
      assertCode(res, 400, 'CAPTCHA_REQUIRED');
    });

    it('a resolved credential keys the route bucket by account, not by address', async () => {
      const user = await registerUser(server);
      const ip = '198.51.100.77';
      const headers = { 'x-test-strict': 'true', 'x-forwarded-for': ip, 'x-captcha-token': 'good' };
      // auth:forgot allows 5 per 60 s; distinct addresses keep the per-email allowance out of the way.
      for (let i = 0; i < 5; i++) {
        const res = await request(server, 'POST', '/v1/auth/forgot', { body: bodyFor('forgot'), headers });
        assert.equal(res.status, 204, res.text);
      }
      const anonymous = await request(server, 'POST', '/v1/auth/forgot', { body: bodyFor('forgot'), headers });
      assertCode(anonymous, 429, 'RATE_LIMITED');
      const withAccount = await request(server, 'POST', '/v1/auth/forgot', {
        auth: user.token,
        body: bodyFor('forgot'),
        headers: { 'x-test-strict': 'true', 'x-forwarded-for': ip },
      });
      assert.equal(withAccount.status, 204, withAccount.text);
    });

    if (provider === 'hcaptcha') {
      for (const mode of ['hang', 'http-500', 'not-json', 'string-success', 'reset'] as const) {
        it(`a provider that ${mode === 'hang' ? 'never answers (timeout)' : `answers ${mode}`} refuses with INVALID_CAPTCHA`, async () => {
          fake.mode = mode;
          const started = Date.now();
          const res = await request(server, 'POST', '/v1/auth/login', {
            body: bodyFor('login'),
            headers: strictFrom({ 'x-captcha-token': 'good' }).headers,
          });
          assertCode(res, 400, 'INVALID_CAPTCHA');
          assert.equal(fake.calls.length, 1);
          if (mode === 'hang') assert.ok(Date.now() - started >= 450, 'gave up before the timeout');
        });
      }
    }
  });
}

describe('CAPTCHA with no provider', () => {
  let server: TestServer;
  before(async () => {
    // The verify URL alone configures nothing: the provider decides.
    server = await startTestServer({ HEARTH_CAPTCHA_VERIFY_URL: `${fake.url}/unused`, ...PROXY });
  });
  after(async () => {
    await server?.close();
  });

  it('discovery says none with no site keys', async () => {
    const discovery = await request(server, 'GET', '/.well-known/service');
    assert.deepEqual(discovery.body.captcha, { provider: 'none', hcaptcha_site_key: null, turnstile_site_key: null });
  });

  it('strict register, login and forgot need no token', async () => {
    fake.calls.length = 0;
    const from = strictFrom();
    const email = uniqueEmail('nocaptcha');
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const register = await request(server, 'POST', '/v1/auth/register', {
      body: { email, password },
      headers: from.headers,
    });
    assert.equal(register.status, 200, register.text);
    const login = await request(server, 'POST', '/v1/auth/login', { body: { email, password }, headers: from.headers });
    assert.equal(login.status, 200, login.text);
    const forgot = await request(server, 'POST', '/v1/auth/forgot', {
      body: { email },
      headers: { ...from.headers, 'x-captcha-token': 'anything' },
    });
    assert.equal(forgot.status, 204, forgot.text);
    assert.equal(fake.calls.length, 0);
  });
});

describe('CAPTCHA settings', () => {
  function refusal(env: Record<string, string>, argv: string[] = []): string {
    try {
      loadConfig(env, argv);
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.message;
    }
    assert.fail('expected the configuration to be refused');
  }

  it('defaults to no provider', () => {
    const config = loadConfig({});
    assert.equal(config.captchaProvider, 'none');
    assert.equal(config.captchaSecret, undefined);
    assert.equal(config.captchaVerifyUrl, undefined);
  });

  it("uses each provider's own siteverify URL unless overridden", () => {
    const hcaptcha = loadConfig({
      HEARTH_CAPTCHA_PROVIDER: 'hcaptcha',
      HEARTH_CAPTCHA_SECRET: 's',
      HEARTH_HCAPTCHA_SITE_KEY: 'k',
    });
    assert.equal(hcaptcha.captchaVerifyUrl, 'https://api.hcaptcha.com/siteverify');
    const turnstile = loadConfig({}, [
      '--captcha-provider',
      'turnstile',
      '--captcha-secret=s',
      '--turnstile-site-key',
      'k',
      '--captcha-timeout-ms=2000',
    ]);
    assert.equal(turnstile.captchaProvider, 'turnstile');
    assert.equal(turnstile.turnstileSiteKey, 'k');
    assert.equal(turnstile.captchaTimeoutMs, 2000);
    assert.equal(turnstile.captchaVerifyUrl, 'https://challenges.cloudflare.com/turnstile/v0/siteverify');
    const overridden = loadConfig({}, [
      '--captcha-provider=hcaptcha',
      '--captcha-secret=s',
      '--hcaptcha-site-key=k',
      '--captcha-verify-url=http://127.0.0.1:9/verify',
    ]);
    assert.equal(overridden.captchaVerifyUrl, 'http://127.0.0.1:9/verify');
  });

  it('names the setting that is missing or wrong', () => {
    assert.match(
      refusal({ HEARTH_CAPTCHA_PROVIDER: 'recaptcha' }),
      /^HEARTH_CAPTCHA_PROVIDER: must be one of none, hcaptcha, turnstile/,
    );
    assert.match(
      refusal({ HEARTH_CAPTCHA_PROVIDER: 'hcaptcha', HEARTH_HCAPTCHA_SITE_KEY: 'k' }),
      /^HEARTH_CAPTCHA_SECRET: must be set when HEARTH_CAPTCHA_PROVIDER is hcaptcha$/,
    );
    assert.match(
      refusal({ HEARTH_CAPTCHA_PROVIDER: 'hcaptcha', HEARTH_CAPTCHA_SECRET: 's', HEARTH_TURNSTILE_SITE_KEY: 'k' }),
      /^HEARTH_HCAPTCHA_SITE_KEY: must be set when HEARTH_CAPTCHA_PROVIDER is hcaptcha$/,
    );
    assert.match(
      refusal({ HEARTH_CAPTCHA_PROVIDER: 'turnstile', HEARTH_CAPTCHA_SECRET: 's', HEARTH_HCAPTCHA_SITE_KEY: 'k' }),
      /^HEARTH_TURNSTILE_SITE_KEY: must be set when HEARTH_CAPTCHA_PROVIDER is turnstile$/,
    );
    assert.match(refusal({}, ['--captcha-verify-url', 'ftp://x']), /^--captcha-verify-url: must use http: or https:$/);
    assert.match(refusal({ HEARTH_CAPTCHA_TIMEOUT_MS: '5' }), /^HEARTH_CAPTCHA_TIMEOUT_MS: must be between/);
  });
});
