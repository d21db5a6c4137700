import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import {
  enableTotp,
  errorCodes,
  newTotpSecret,
  SUDO_HEADER,
  setClock,
  sudoProofViaTotp,
  totpCode,
} from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});
afterEach(async () => {
  await setClock(server, 0);
  await harness(server, 'POST', '/rate-limits/reset');
});

async function storedSecret(userId: string): Promise<string | undefined> {
  const [row] = await server.app.services.db.query<{ secret: string }>(
    'SELECT secret FROM mfa_totp WHERE user_id = $1',
    [userId],
  );
  return row?.secret;
}

async function setStoredSecret(userId: string, value: string): Promise<void> {
  await server.app.services.db.query('UPDATE mfa_totp SET secret = $2 WHERE user_id = $1', [userId, value]);
}

/** Password step then TOTP step; the whole answer of the second step. */
async function loginWithCode(user: TestUser, code: string) {
  const first = await request(server, 'POST', '/v1/auth/login', {
    body: { email: user.email, password: user.password },
  });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.mfa, true);
  return request(server, 'POST', '/v1/auth/login/mfa/totp', { body: { code, ticket: first.body.ticket } });
}

/** Flips one character of the ciphertext part (`v1.<iv>.<tag>.<ciphertext>`). */
function tamperCiphertext(stored: string): string {
  const parts = stored.split('.');
  const body = parts[3] ?? '';
  const i = Math.floor(body.length / 2);
  parts[3] = `${body.slice(0, i)}${body[i] === 'A' ? 'B' : 'A'}${body.slice(i + 1)}`;
  return parts.join('.');
}

describe('TOTP secrets at rest', () => {
  it('stores a sealed value, not the secret, and TOTP login and sudo still work', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const stored = await storedSecret(user.id);
    assert.ok(stored);
    assert.notEqual(stored, secret);
    assert.ok(!stored.toUpperCase().includes(secret.toUpperCase()), 'the base32 secret shows in the row');
    assert.match(stored, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);

    const login = await loginWithCode(user, totpCode(secret));
    assert.equal(login.status, 200, login.text);
    assert.equal(typeof login.body.token, 'string');

    const proof = await sudoProofViaTotp(server, login.body.token, secret);
    assert.ok(proof.length > 0);
  });

  it('two accounts with the same secret store different values', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    const secret = newTotpSecret();
    for (const user of [a, b]) {
      const res = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
        auth: user.token,
        body: { secret, code: totpCode(secret) },
      });
      assert.equal(res.status, 200, res.text);
    }
    assert.notEqual(await storedSecret(a.id), await storedSecret(b.id));
  });

  it('a tampered ciphertext fails closed: the code is refused (400, no 500), backup codes still work', async () => {
    const user = await registerUser(server);
    const { secret, backupCodes } = await enableTotp(server, user.token);
    const stored = await storedSecret(user.id);
    assert.ok(stored);
    await setStoredSecret(user.id, tamperCiphertext(stored));

    const login = await loginWithCode(user, totpCode(secret));
    assert.equal(login.status, 400, login.text);
    assert.deepEqual(errorCodes(login), ['code:INVALID_CODE']);

    const sudo = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: user.token,
      body: { session_id_hashes: [], mfa_method: 'totp', mfa_code: totpCode(secret) },
    });
    assert.equal(sudo.status, 400, sudo.text);
    assert.deepEqual(errorCodes(sudo), ['mfa_code:INVALID_MFA_CODE']);
    assert.equal(sudo.headers.get(SUDO_HEADER), null);

    const backup = await loginWithCode(user, backupCodes[0] as string);
    assert.equal(backup.status, 200, backup.text);

    // Restoring the untouched value brings the factor back: the refusal came from the tampering alone.
    await setStoredSecret(user.id, stored);
    const restored = await loginWithCode(user, totpCode(secret, 30_000));
    assert.equal(restored.status, 200, restored.text);
  });

  it("another account's sealed secret does not open (the account id is bound to the ciphertext)", async () => {
    const victim = await registerUser(server);
    const attacker = await registerUser(server);
    const victimTotp = await enableTotp(server, victim.token);
    await enableTotp(server, attacker.token);
    await setStoredSecret(attacker.id, (await storedSecret(victim.id)) as string);
    const login = await loginWithCode(attacker, totpCode(victimTotp.secret));
    assert.equal(login.status, 400, login.text);
    assert.deepEqual(errorCodes(login), ['code:INVALID_CODE']);
  });

  it('a plain secret from before encryption is not used for codes until start-up seals it', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    // A row as earlier versions wrote it: the normalised base32 secret itself.
    await setStoredSecret(user.id, secret);
    const refused = await loginWithCode(user, totpCode(secret));
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(errorCodes(refused), ['code:INVALID_CODE']);

    // What every start runs before serving (src/app.ts); only the plain row changes.
    const other = await registerUser(server);
    await enableTotp(server, other.token);
    const otherBefore = await storedSecret(other.id);
    assert.ok((await server.app.services.mfa.totp.sealPlainSecrets()) >= 1);
    assert.equal(await storedSecret(other.id), otherBefore);
    const sealed = (await storedSecret(user.id)) ?? '';
    assert.ok(sealed.startsWith('v1.'), sealed);
    assert.ok(!sealed.includes(secret));
    assert.equal(await server.app.services.mfa.totp.sealPlainSecrets(), 0);

    const login = await loginWithCode(user, totpCode(secret, 30_000));
    assert.equal(login.status, 200, login.text);
  });
});
