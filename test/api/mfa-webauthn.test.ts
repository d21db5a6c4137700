import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import {
  enableTotp,
  errorCodes,
  jwtClaims,
  newTotpSecret,
  RP_ID,
  RP_ORIGIN,
  SUDO_HEADER,
  setClock,
  totpCode,
  WEBAUTHN_ENV,
} from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SoftwareAuthenticator } from '../support/webauthn-authenticator.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer(WEBAUTHN_ENV);
});
after(async () => {
  await server?.close();
});
afterEach(async () => {
  await setClock(server, 0);
});

const CREDENTIALS = '/v1/users/@me/mfa/webauthn/credentials';

function registrationOptions(token: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return request(server, 'POST', `${CREDENTIALS}/registration-options`, { auth: token, body, headers });
}

/** Registers a passkey for a password account that has no MFA yet (sudo by password). */
async function addFirstPasskey(user: TestUser, authenticator: SoftwareAuthenticator, name = 'Laptop') {
  const options = await registrationOptions(user.token, { password: user.password });
  assert.equal(options.status, 200);
  const response = authenticator.register(options.body);
  const res = await request(server, 'POST', CREDENTIALS, {
    auth: user.token,
    body: { response, challenge: options.body.challenge, name },
  });
  assert.equal(res.status, 204, res.text);
}

/** Sudo fields proving the passkey: a fresh sudo challenge answered by the authenticator. */
async function webauthnSudo(token: string, authenticator: SoftwareAuthenticator) {
  const options = await request(server, 'POST', '/v1/users/@me/sudo/webauthn/authentication-options', { auth: token });
  assert.equal(options.status, 200);
  return {
    mfa_method: 'webauthn',
    webauthn_response: authenticator.assert(options.body),
    webauthn_challenge: options.body.challenge,
  };
}

async function credentialIds(token: string): Promise<string[]> {
  const list = await request(server, 'GET', CREDENTIALS, { auth: token });
  assert.equal(list.status, 200);
  return list.body.map((c: { id: string }) => c.id);
}

describe('WebAuthn registration', () => {
  it('issues creation options under sudo y⁰ and registers a real attestation', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);

    const noSudo = await registrationOptions(user.token);
    assert.equal(noSudo.status, 403);
    assert.deepEqual(noSudo.body, {
      code: 'SUDO_MODE_REQUIRED',
      message: 'Sudo mode required',
      has_mfa: false,
      methods: { totp: false, webauthn: false, password: true },
    });

    const options = await registrationOptions(user.token, { password: user.password });
    assert.equal(options.status, 200);
    assert.equal(options.headers.get(SUDO_HEADER), null);
    assert.equal(options.body.rp.id, RP_ID);
    assert.deepEqual(
      options.body.pubKeyCredParams.map((p: { alg: number }) => p.alg),
      [-8, -7, -257],
    );
    assert.equal(options.body.attestation, 'none');
    assert.equal(options.body.timeout, 300_000);
    assert.equal(Buffer.from(options.body.user.id, 'base64url').toString(), user.id);
    assert.match(options.body.challenge, /^[A-Za-z0-9_-]{43}$/);

    const response = authenticator.register(options.body);
    const created = await request(server, 'POST', CREDENTIALS, {
      auth: user.token,
      body: { response, challenge: options.body.challenge, name: 'Laptop' },
    });
    assert.equal(created.status, 204, created.text);

    // The challenge was single-use.
    const again = await request(server, 'POST', CREDENTIALS, {
      auth: user.token,
      body: { response: authenticator.register(options.body), challenge: options.body.challenge, name: 'Again' },
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'INVALID_WEBAUTHN_CREDENTIAL');

    const list = await request(server, 'GET', CREDENTIALS, { auth: user.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
    assert.deepEqual(Object.keys(list.body[0]).sort(), ['created_at', 'id', 'last_used_at', 'name']);
    assert.equal(list.body[0].name, 'Laptop');
    assert.equal(list.body[0].last_used_at, null);

    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.mfa_enabled, true);
    assert.deepEqual(me.body.authenticator_types, [2]);
    const methods = await request(server, 'GET', '/v1/users/@me/sudo/mfa-methods', { auth: user.token });
    assert.deepEqual(methods.body, { totp: false, webauthn: true, sms: false, has_mfa: true });

    // Now an MFA account: the password alone no longer satisfies sudo mode.
    const byPassword = await registrationOptions(user.token, { password: user.password });
    assert.equal(byPassword.status, 403);
    assert.deepEqual(byPassword.body.methods, { totp: false, webauthn: true, password: false });
    assert.equal(byPassword.body.has_mfa, true);
  });

  it('rejects a wrong origin, a tampered attestation, a foreign or expired challenge', async () => {
    const user = await registerUser(server);
    const other = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    const register = async (token: string, response: unknown, challenge: string) =>
      request(server, 'POST', CREDENTIALS, { auth: token, body: { response, challenge, name: 'Key' } });

    let options = await registrationOptions(user.token, { password: user.password });
    let res = await register(
      user.token,
      authenticator.register(options.body, { origin: 'https://evil.test' }),
      options.body.challenge,
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_WEBAUTHN_CREDENTIAL');

    options = await registrationOptions(user.token, { password: user.password });
    const genuine = authenticator.register(options.body) as { response: { attestationObject: string } };
    // Flip a bit of the RP ID hash inside authData: the attestation no longer belongs to this relying party.
    const bytes = Buffer.from(genuine.response.attestationObject, 'base64url');
    const at = bytes.indexOf(createHash('sha256').update(RP_ID).digest());
    assert.ok(at > 0);
    bytes[at] = (bytes[at] as number) ^ 0x01;
    genuine.response.attestationObject = bytes.toString('base64url');
    res = await register(user.token, genuine, options.body.challenge);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_WEBAUTHN_CREDENTIAL');

    // Another account's challenge.
    const foreign = await registrationOptions(other.token, { password: other.password });
    res = await register(user.token, authenticator.register(foreign.body), foreign.body.challenge);
    assert.equal(res.status, 400);

    // A challenge issued for something else (a sudo assertion needs a credential, so use the passkey one).
    const passkey = await request(server, 'POST', '/v1/auth/webauthn/authentication-options');
    res = await register(
      user.token,
      authenticator.register({ ...options.body, challenge: passkey.body.challenge }),
      passkey.body.challenge,
    );
    assert.equal(res.status, 400);

    options = await registrationOptions(user.token, { password: user.password });
    await setClock(server, 5 * 60_000 + 1000);
    res = await register(user.token, authenticator.register(options.body), options.body.challenge);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_WEBAUTHN_CREDENTIAL');

    // Garbage never becomes a 500.
    options = await registrationOptions(user.token, { password: user.password });
    res = await register(user.token, { id: 'x', rawId: 'x', type: 'public-key', response: {} }, options.body.challenge);
    assert.equal(res.status, 400);
    res = await request(server, 'POST', CREDENTIALS, {
      auth: user.token,
      body: { response: 'nope', challenge: 'c', name: 'Key' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    assert.deepEqual(await credentialIds(user.token), []);
  });

  it('renames and deletes under sudo, with 404 for unknown credentials', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);
    const [id] = await credentialIds(user.token);
    // Listings show the WebAuthn credential id (base64url), as the platform's clients expect.
    assert.equal(id, Buffer.from((authenticator.credentials[0] as { id: Buffer }).id).toString('base64url'));

    const noSudo = await request(server, 'PATCH', `${CREDENTIALS}/${id}`, { auth: user.token, body: { name: 'New' } });
    assert.equal(noSudo.status, 403);
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');

    const renamed = await request(server, 'PATCH', `${CREDENTIALS}/${id}`, {
      auth: user.token,
      body: { name: 'Renamed', ...(await webauthnSudo(user.token, authenticator)) },
    });
    assert.equal(renamed.status, 204, renamed.text);
    const proof = renamed.headers.get(SUDO_HEADER) ?? '';
    assert.ok(proof);
    const claims = jwtClaims(proof);
    assert.equal(claims.type, 'sudo');
    assert.equal(claims.sub, user.id);
    assert.equal((claims.exp as number) - (claims.iat as number), 300);

    const list = await request(server, 'GET', CREDENTIALS, { auth: user.token });
    assert.equal(list.body[0].name, 'Renamed');
    assert.ok(list.body[0].last_used_at);

    for (const missing of ['123456789012345678', 'not-an-id']) {
      const res = await request(server, 'PATCH', `${CREDENTIALS}/${missing}`, {
        auth: user.token,
        body: { name: 'X' },
        headers: { [SUDO_HEADER]: proof },
      });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'UNKNOWN_WEBAUTHN_CREDENTIAL');
      assert.equal(res.headers.get(SUDO_HEADER), proof);
    }

    // Another account cannot touch it.
    const other = await registerUser(server);
    const foreign = await request(server, 'DELETE', `${CREDENTIALS}/${id}`, {
      auth: other.token,
      body: { password: other.password },
    });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.code, 'UNKNOWN_WEBAUTHN_CREDENTIAL');

    const deleted = await request(server, 'DELETE', `${CREDENTIALS}/${id}`, {
      auth: user.token,
      headers: { [SUDO_HEADER]: proof },
    });
    assert.equal(deleted.status, 204);
    assert.deepEqual(await credentialIds(user.token), []);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.mfa_enabled, false);
  });

  it('y⁰: registration options never mint or echo a proof, even for an MFA account', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);
    const byAssertion = await registrationOptions(user.token, await webauthnSudo(user.token, authenticator));
    assert.equal(byAssertion.status, 200);
    assert.equal(byAssertion.headers.get(SUDO_HEADER), null);

    const [id] = await credentialIds(user.token);
    const renamed = await request(server, 'PATCH', `${CREDENTIALS}/${id}`, {
      auth: user.token,
      body: { name: 'K', ...(await webauthnSudo(user.token, authenticator)) },
    });
    const proof = renamed.headers.get(SUDO_HEADER) as string;
    const byProof = await registrationOptions(user.token, {}, { [SUDO_HEADER]: proof });
    assert.equal(byProof.status, 200);
    assert.equal(byProof.headers.get(SUDO_HEADER), null);
  });

  it('stops at 10 credentials', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator, 'Key 1');
    const [id] = await credentialIds(user.token);
    const renamed = await request(server, 'PATCH', `${CREDENTIALS}/${id}`, {
      auth: user.token,
      body: { name: 'Key 1', ...(await webauthnSudo(user.token, authenticator)) },
    });
    const proof = renamed.headers.get(SUDO_HEADER) as string;
    for (let i = 2; i <= 10; i++) {
      const options = await registrationOptions(user.token, {}, { [SUDO_HEADER]: proof });
      assert.equal(options.status, 200);
      assert.equal(options.body.excludeCredentials.length, i - 1);
      const res = await request(server, 'POST', CREDENTIALS, {
        auth: user.token,
        body: { response: authenticator.register(options.body), challenge: options.body.challenge, name: `Key ${i}` },
      });
      assert.equal(res.status, 204);
    }
    const full = await registrationOptions(user.token, {}, { [SUDO_HEADER]: proof });
    assert.equal(full.status, 400);
    assert.equal(full.body.code, 'WEBAUTHN_CREDENTIAL_LIMIT_REACHED');
    assert.equal((await credentialIds(user.token)).length, 10);
  });
});

describe('sudo mode by WebAuthn', () => {
  it('refuses an assertion by another account’s key, a reused challenge and a login challenge', async () => {
    const alice = await registerUser(server);
    const bob = await registerUser(server);
    const aliceKey = new SoftwareAuthenticator(RP_ORIGIN);
    const bobKey = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(alice, aliceKey);
    await addFirstPasskey(bob, bobKey);

    const sudoOptions = await request(server, 'POST', '/v1/users/@me/sudo/webauthn/authentication-options', {
      auth: alice.token,
    });
    const wrongKey = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: alice.token,
      body: {
        session_id_hashes: [],
        mfa_method: 'webauthn',
        webauthn_response: bobKey.assert({ ...sudoOptions.body, allowCredentials: [] }),
        webauthn_challenge: sudoOptions.body.challenge,
      },
    });
    assert.equal(wrongKey.status, 400);
    assert.deepEqual(errorCodes(wrongKey), ['mfa_code:INVALID_MFA_CODE']);

    const fields = await webauthnSudo(alice.token, aliceKey);
    const ok = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: alice.token,
      body: { session_id_hashes: [], ...fields },
    });
    assert.equal(ok.status, 204);
    assert.ok(ok.headers.get(SUDO_HEADER));
    const replay = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: alice.token,
      body: { session_id_hashes: [], ...fields },
    });
    assert.equal(replay.status, 400);
    assert.deepEqual(errorCodes(replay), ['mfa_code:INVALID_MFA_CODE']);

    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: alice.email, password: alice.password },
    });
    const loginOptions = await request(server, 'POST', '/v1/auth/login/mfa/webauthn/authentication-options', {
      body: { ticket: login.body.ticket },
    });
    const crossPurpose = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: alice.token,
      body: {
        session_id_hashes: [],
        mfa_method: 'webauthn',
        webauthn_response: aliceKey.assert(loginOptions.body),
        webauthn_challenge: loginOptions.body.challenge,
      },
    });
    assert.equal(crossPurpose.status, 400);
  });

  it('answers sudo authentication options with NO_PASSKEYS_REGISTERED for an account without passkeys', async () => {
    const user = await registerUser(server);
    const res = await request(server, 'POST', '/v1/users/@me/sudo/webauthn/authentication-options', {
      auth: user.token,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'NO_PASSKEYS_REGISTERED');
  });
});

describe('login with WebAuthn as second factor', () => {
  it('issues a ticket, request options and a token for a valid assertion', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(login.status, 200);
    assert.deepEqual(login.body.allowed_methods, ['webauthn']);
    assert.equal(login.body.webauthn, true);
    assert.equal(login.body.totp, false);
    const ticket = login.body.ticket;

    const badTicket = await request(server, 'POST', '/v1/auth/login/mfa/webauthn/authentication-options', {
      body: { ticket: 'nope' },
    });
    assert.equal(badTicket.status, 400);
    assert.deepEqual(errorCodes(badTicket), ['ticket:SESSION_TIMEOUT']);

    const totpInstead = await request(server, 'POST', '/v1/auth/login/mfa/totp', { body: { code: '123456', ticket } });
    assert.deepEqual(errorCodes(totpInstead), ['code:TOTP_NOT_ENABLED']);

    let options = await request(server, 'POST', '/v1/auth/login/mfa/webauthn/authentication-options', {
      body: { ticket },
    });
    assert.equal(options.status, 200);
    assert.equal(options.body.rpId, RP_ID);
    assert.equal(options.body.allowCredentials.length, 1);

    const forged = authenticator.assert(options.body) as { response: { signature: string } };
    const sig = Buffer.from(forged.response.signature, 'base64url');
    sig[sig.length - 1] = (sig[sig.length - 1] as number) ^ 0x01;
    forged.response.signature = sig.toString('base64url');
    const failed = await request(server, 'POST', '/v1/auth/login/mfa/webauthn', {
      body: { response: forged, challenge: options.body.challenge, ticket },
    });
    assert.equal(failed.status, 401);
    assert.deepEqual(failed.body, { code: 'PASSKEY_AUTHENTICATION_FAILED', message: 'Passkey authentication failed' });

    options = await request(server, 'POST', '/v1/auth/login/mfa/webauthn/authentication-options', { body: { ticket } });
    const ok = await request(server, 'POST', '/v1/auth/login/mfa/webauthn', {
      body: { response: authenticator.assert(options.body), challenge: options.body.challenge, ticket },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.user_id, user.id);
    assert.match(ok.body.token, /^flx_/);
    assert.deepEqual(ok.body.user.authenticator_types, [2]);

    options = await request(server, 'POST', '/v1/auth/login/mfa/webauthn/authentication-options', { body: { ticket } });
    assert.equal(options.status, 400);
    assert.deepEqual(errorCodes(options), ['ticket:SESSION_TIMEOUT']);
  });

  it('says NO_PASSKEYS_REGISTERED for a TOTP-only account', async () => {
    const user = await registerUser(server);
    await enableTotp(server, user.token);
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    const res = await request(server, 'POST', '/v1/auth/login/mfa/webauthn/authentication-options', {
      body: { ticket: login.body.ticket },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'NO_PASSKEYS_REGISTERED');
  });

  it('offers both methods to an account with TOTP and a passkey', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);
    await enableTotp(server, user.token, await webauthnSudo(user.token, authenticator));
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.deepEqual(login.body.allowed_methods, ['totp', 'webauthn']);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.deepEqual(me.body.authenticator_types, [0, 2]);
  });
});

describe('adding TOTP as a second factor', () => {
  it('needs sudo mode on a passkey account: a stolen session cannot add a factor it controls', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);
    const secret = newTotpSecret();
    const refused = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret, code: totpCode(secret) },
    });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, {
      code: 'SUDO_MODE_REQUIRED',
      message: 'Sudo mode required',
      has_mfa: true,
      methods: { totp: false, webauthn: true, password: false },
    });
    // The password is not enough once a passkey exists.
    const byPassword = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret, code: totpCode(secret), password: user.password },
    });
    assert.equal(byPassword.status, 403);
    assert.equal(byPassword.body.code, 'SUDO_MODE_REQUIRED');
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.deepEqual(me.body.authenticator_types, [2]);

    const ok = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret, code: totpCode(secret), ...(await webauthnSudo(user.token, authenticator)) },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.backup_codes.length, 10);
    assert.ok(ok.headers.get(SUDO_HEADER));
  });
});

describe('passkey login (discoverable)', () => {
  it('signs in with a user-verified assertion and refuses replays and unverified ones', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);

    let options = await request(server, 'POST', '/v1/auth/webauthn/authentication-options');
    assert.equal(options.status, 200);
    assert.equal(options.body.userVerification, 'required');
    assert.equal(options.body.allowCredentials, undefined);
    const response = authenticator.assert(options.body);
    const ok = await request(server, 'POST', '/v1/auth/webauthn/authenticate', {
      body: { response, challenge: options.body.challenge },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.user_id, user.id);
    assert.match(ok.body.token, /^flx_/);

    const replay = await request(server, 'POST', '/v1/auth/webauthn/authenticate', {
      body: { response, challenge: options.body.challenge },
    });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.code, 'PASSKEY_AUTHENTICATION_FAILED');

    options = await request(server, 'POST', '/v1/auth/webauthn/authentication-options');
    const unverified = await request(server, 'POST', '/v1/auth/webauthn/authenticate', {
      body: {
        response: authenticator.assert(options.body, { userVerified: false }),
        challenge: options.body.challenge,
      },
    });
    assert.equal(unverified.status, 401);

    // A sudo challenge does not open a login.
    const sudoOptions = await request(server, 'POST', '/v1/users/@me/sudo/webauthn/authentication-options', {
      auth: user.token,
    });
    const crossPurpose = await request(server, 'POST', '/v1/auth/webauthn/authenticate', {
      body: { response: authenticator.assert(sudoOptions.body), challenge: sudoOptions.body.challenge },
    });
    assert.equal(crossPurpose.status, 401);

    const bogus = await request(server, 'POST', '/v1/auth/webauthn/authenticate', {
      body: { response: { id: 'abc' }, challenge: 'abc' },
    });
    assert.equal(bogus.status, 401);
  });

  it('refuses a bot account', async () => {
    const user = await registerUser(server);
    const authenticator = new SoftwareAuthenticator(RP_ORIGIN);
    await addFirstPasskey(user, authenticator);
    await harness(server, 'POST', `/users/${user.id}/set-bot-flag`, { is_bot: true });
    const options = await request(server, 'POST', '/v1/auth/webauthn/authentication-options');
    const res = await request(server, 'POST', '/v1/auth/webauthn/authenticate', {
      body: { response: authenticator.assert(options.body), challenge: options.body.challenge },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
  });
});
