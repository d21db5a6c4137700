import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import {
  enableTotp,
  errorCodes,
  newTotpSecret,
  registerPasswordless,
  STRICT,
  SUDO_HEADER,
  setClock,
  totpCode,
  WEBAUTHN_ENV,
} from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer(WEBAUTHN_ENV);
});
after(async () => {
  await server?.close();
});
afterEach(async () => {
  await setClock(server, 0);
  await harness(server, 'POST', '/rate-limits/reset');
});

async function login(user: TestUser, headers: Record<string, string> = {}) {
  return request(server, 'POST', '/v1/auth/login', { body: { email: user.email, password: user.password }, headers });
}

async function mfaTicket(user: TestUser): Promise<string> {
  const res = await login(user);
  assert.equal(res.status, 200);
  assert.equal(res.body.mfa, true);
  return res.body.ticket;
}

function totpStep(body: { code: string; ticket: string }, headers: Record<string, string> = {}) {
  return request(server, 'POST', '/v1/auth/login/mfa/totp', { body, headers });
}

describe('TOTP enable', () => {
  it('needs a base32 secret and a matching code, then returns 10 backup codes', async () => {
    const user = await registerUser(server);
    const secret = newTotpSecret();

    const badSecret = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret: 'not base32 !!', code: '123456' },
    });
    assert.equal(badSecret.status, 400);
    assert.deepEqual(errorCodes(badSecret), ['secret:INVALID_FORMAT']);

    const shortSecret = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret: 'ABCDEFGH', code: '123456' },
    });
    assert.equal(shortSecret.status, 400);

    const wrongCode = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret, code: totpCode(secret, -5 * 60_000) },
    });
    assert.equal(wrongCode.status, 400);
    assert.deepEqual(errorCodes(wrongCode), ['code:INVALID_CODE']);
    const still = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(still.body.mfa_enabled, false);

    const ok = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret: secret.toLowerCase(), code: totpCode(secret) },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.backup_codes.length, 10);
    for (const c of ok.body.backup_codes) {
      assert.match(c.code, /^[a-z0-9]{4}-[a-z0-9]{4}$/);
      assert.equal(c.consumed, false);
    }
    assert.equal(new Set(ok.body.backup_codes.map((c: { code: string }) => c.code)).size, 10);

    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.mfa_enabled, true);
    assert.deepEqual(me.body.authenticator_types, [0]);

    const methods = await request(server, 'GET', '/v1/users/@me/sudo/mfa-methods', { auth: user.token });
    assert.deepEqual(methods.body, { totp: true, webauthn: false, sms: false, has_mfa: true });

    const again = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret: newTotpSecret(), code: '000000' },
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'TWO_FA_ALREADY_ENABLED');
  });

  it('needs a credential', async () => {
    const anonymous = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      body: { secret: newTotpSecret(), code: '000000' },
    });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.code, 'UNAUTHORIZED');
  });
});

describe('login with TOTP', () => {
  it('answers a password login with a ticket, and the TOTP step with a token', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const res = await login(user);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['allowed_methods', 'mfa', 'sms', 'ticket', 'totp', 'webauthn']);
    assert.deepEqual(res.body.allowed_methods, ['totp']);
    assert.equal(res.body.totp, true);
    assert.equal(res.body.webauthn, false);
    assert.equal(res.body.sms, false);
    assert.match(res.body.ticket, /^[A-Za-z0-9]{64}$/);

    const wrong = await totpStep({
      code: '000000' === totpCode(secret) ? '111111' : '000000',
      ticket: res.body.ticket,
    });
    assert.equal(wrong.status, 400);
    assert.deepEqual(errorCodes(wrong), ['code:INVALID_CODE']);

    const ok = await totpStep({ code: totpCode(secret), ticket: res.body.ticket });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.user_id, user.id);
    assert.match(ok.body.token, /^flx_[A-Za-z0-9]{36}$/);
    assert.equal(ok.body.user.mfa_enabled, true);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: ok.body.token });
    assert.equal(me.status, 200);

    // single use
    const reuse = await totpStep({ code: totpCode(secret), ticket: res.body.ticket });
    assert.equal(reuse.status, 400);
    assert.deepEqual(errorCodes(reuse), ['ticket:SESSION_TIMEOUT']);
  });

  it('refuses an unknown ticket and an expired one', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const unknown = await totpStep({ code: totpCode(secret), ticket: 'x'.repeat(64) });
    assert.equal(unknown.status, 400);
    assert.deepEqual(errorCodes(unknown), ['ticket:SESSION_TIMEOUT']);

    const ticket = await mfaTicket(user);
    await setClock(server, 5 * 60_000 + 1000);
    const expired = await totpStep({ code: totpCode(secret), ticket });
    assert.equal(expired.status, 400);
    assert.deepEqual(errorCodes(expired), ['ticket:SESSION_TIMEOUT']);
  });

  it('kills a ticket after 5 bad codes', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const ticket = await mfaTicket(user);
    const bad = totpCode(secret) === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) {
      const res = await totpStep({ code: bad, ticket });
      assert.equal(res.status, 400);
      assert.deepEqual(errorCodes(res), ['code:INVALID_CODE']);
    }
    const good = await totpStep({ code: totpCode(secret), ticket });
    assert.equal(good.status, 400);
    assert.deepEqual(errorCodes(good), ['ticket:SESSION_TIMEOUT']);
  });

  it('refuses codes outside ±1 step, and accepts the neighbouring steps', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const old = await totpStep({ code: totpCode(secret, -90_000), ticket: await mfaTicket(user) });
    assert.equal(old.status, 400);
    assert.deepEqual(errorCodes(old), ['code:INVALID_CODE']);
    const future = await totpStep({ code: totpCode(secret, 90_000), ticket: await mfaTicket(user) });
    assert.equal(future.status, 400);
    const previous = await totpStep({ code: totpCode(secret, -30_000), ticket: await mfaTicket(user) });
    assert.equal(previous.status, 200);
    const next = await totpStep({ code: totpCode(secret, 30_000), ticket: await mfaTicket(user) });
    assert.equal(next.status, 200);
  });

  it('expires codes with the server clock', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const ticket = await mfaTicket(user);
    const codeNow = totpCode(secret);
    await setClock(server, 2 * 60_000);
    const stale = await totpStep({ code: codeNow, ticket });
    assert.equal(stale.status, 400);
    assert.deepEqual(errorCodes(stale), ['code:INVALID_CODE']);
    const fresh = await totpStep({ code: totpCode(secret), ticket });
    assert.equal(fresh.status, 200);
  });

  it('refuses a replayed code under X-Test-Strict, and not in relaxed test mode', async () => {
    const user = await registerUser(server);
    const secret = newTotpSecret();
    const enableCode = totpCode(secret);
    const enabled = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret, code: enableCode },
    });
    assert.equal(enabled.status, 200);
    // The enabling code's step already counts as used (checked only while that step is still current).
    const replayOfEnable = await totpStep({ code: enableCode, ticket: await mfaTicket(user) }, STRICT);
    if (totpCode(secret) === enableCode) {
      assert.equal(replayOfEnable.status, 400);
      assert.deepEqual(errorCodes(replayOfEnable), ['code:INVALID_CODE']);
    }
    const nextCode = totpCode(secret, 30_000);
    const first = await totpStep({ code: nextCode, ticket: await mfaTicket(user) }, STRICT);
    assert.equal(first.status, 200);
    const replay = await totpStep({ code: nextCode, ticket: await mfaTicket(user) }, STRICT);
    assert.equal(replay.status, 400);
    assert.deepEqual(errorCodes(replay), ['code:INVALID_CODE']);
    // Relaxed test mode turns the replay guard off.
    const relaxed = await totpStep({ code: nextCode, ticket: await mfaTicket(user) });
    assert.equal(relaxed.status, 200);
  });

  it('says TOTP_NOT_ENABLED for an account without TOTP (harness ticket)', async () => {
    const user = await registerUser(server);
    const ticket = randomBytes(32).toString('hex');
    const planted = await harness(server, 'POST', '/auth/mfa-ticket', { ticket, user_id: user.id });
    assert.equal(planted.status, 200);
    assert.deepEqual(planted.body, { success: true, ticket, user_id: user.id, ttl_seconds: 300 });
    const res = await totpStep({ code: '123456', ticket });
    assert.equal(res.status, 400);
    assert.deepEqual(errorCodes(res), ['code:TOTP_NOT_ENABLED']);
  });

  it('honours the harness ticket ttl', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const ticket = randomBytes(32).toString('hex');
    await harness(server, 'POST', '/auth/mfa-ticket', { ticket, user_id: user.id, ttl_seconds: 10 });
    await setClock(server, 11_000);
    const res = await totpStep({ code: totpCode(secret), ticket });
    assert.deepEqual(errorCodes(res), ['ticket:SESSION_TIMEOUT']);
    const unknownUser = await harness(server, 'POST', '/auth/mfa-ticket', { ticket, user_id: '1' });
    assert.equal(unknownUser.status, 404);
  });

  it('rate limits MFA failures per account under X-Test-Strict (10 per 15 min), login and sudo together', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const bad = totpCode(secret) === '999999' ? '999998' : '999999';
    const sudo = (code: string) =>
      request(server, 'POST', '/v1/auth/sessions/logout', {
        auth: user.token,
        body: { session_id_hashes: [], mfa_method: 'totp', mfa_code: code },
        headers: STRICT,
      });
    // 5 failed login steps (one ticket's worth, within the route bucket) and 5 failed sudo checks.
    const ticket = await mfaTicket(user);
    for (let i = 0; i < 5; i++) {
      const res = await totpStep({ code: bad, ticket }, STRICT);
      assert.equal(res.status, 400, `login attempt ${i + 1}`);
    }
    for (let i = 0; i < 5; i++) {
      const res = await sudo(bad);
      assert.equal(res.status, 400, `sudo attempt ${i + 1}`);
      assert.deepEqual(errorCodes(res), ['mfa_code:INVALID_MFA_CODE']);
    }
    // The 11th attempt is refused whatever the code.
    const limited = await sudo(totpCode(secret, 30_000));
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.equal(limited.body.global, false);
    assert.ok(limited.body.retry_after > 0);
    // The account allowance, not a route bucket (which would name itself).
    assert.equal(limited.headers.get('x-ratelimit-bucket'), null);
    // The window slides: 15 minutes later the account may try again.
    await setClock(server, 15 * 60_000 + 1000);
    const later = await totpStep({ code: totpCode(secret), ticket: await mfaTicket(user) }, STRICT);
    assert.equal(later.status, 200);
  });

  it('forgets the MFA failure allowance on POST /test/rate-limits/reset', async () => {
    const user = await registerUser(server);
    const { secret } = await enableTotp(server, user.token);
    const bad = totpCode(secret) === '999999' ? '999998' : '999999';
    for (let i = 0; i < 10; i++) {
      const res = await request(server, 'POST', '/v1/auth/sessions/logout', {
        auth: user.token,
        body: { session_id_hashes: [], mfa_method: 'totp', mfa_code: bad },
        headers: STRICT,
      });
      assert.equal(res.status, 400, `attempt ${i + 1}`);
    }
    const good = { session_id_hashes: [], mfa_method: 'totp', mfa_code: totpCode(secret, 30_000) };
    const limited = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: user.token,
      body: good,
      headers: STRICT,
    });
    assert.equal(limited.status, 429);
    await harness(server, 'POST', '/rate-limits/reset');
    const after = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: user.token,
      body: good,
      headers: STRICT,
    });
    assert.equal(after.status, 204);
  });
});

describe('backup codes', () => {
  it('log in once each, ignoring case and separators', async () => {
    const user = await registerUser(server);
    const { backupCodes } = await enableTotp(server, user.token);
    const [first, second] = backupCodes as [string, string];
    const ok = await totpStep({ code: first, ticket: await mfaTicket(user) });
    assert.equal(ok.status, 200);
    const again = await totpStep({ code: first, ticket: await mfaTicket(user) });
    assert.equal(again.status, 400);
    assert.deepEqual(errorCodes(again), ['code:INVALID_CODE']);
    const loose = await totpStep({ code: ` ${second.toUpperCase().replace('-', '')} `, ticket: await mfaTicket(user) });
    assert.equal(loose.status, 200);
  });

  it('regenerate (sudo) retires the old set', async () => {
    const user = await registerUser(server);
    const { secret, backupCodes } = await enableTotp(server, user.token);
    const noSudo = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
      auth: user.token,
      body: { regenerate: true },
    });
    assert.equal(noSudo.status, 403);
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');

    const res = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
      auth: user.token,
      body: { regenerate: true, mfa_method: 'totp', mfa_code: totpCode(secret) },
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get(SUDO_HEADER));
    assert.equal(res.body.backup_codes.length, 10);
    const old = await totpStep({ code: backupCodes[0] as string, ticket: await mfaTicket(user) });
    assert.equal(old.status, 400);
    const fresh = await totpStep({ code: res.body.backup_codes[0].code, ticket: await mfaTicket(user) });
    assert.equal(fresh.status, 200);
  });

  it('without regenerate (sudo) shows the current set, consumed flags included; stored keyed and sealed', async () => {
    const user = await registerUser(server);
    const { secret, backupCodes } = await enableTotp(server, user.token);
    const used = await totpStep({ code: backupCodes[2] as string, ticket: await mfaTicket(user) });
    assert.equal(used.status, 200);
    const res = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
      auth: user.token,
      body: { mfa_method: 'totp', mfa_code: totpCode(secret) },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.backup_codes,
      backupCodes.map((code) => ({ code, consumed: code === backupCodes[2] })),
    );
    // At rest: neither the code nor its unkeyed digest; a keyed digest and a sealed copy.
    const rows = await server.app.services.db.query<{ code_hash: string; code_sealed: string }>(
      'SELECT code_hash, code_sealed FROM mfa_backup_codes WHERE user_id = $1',
      [user.id],
    );
    assert.equal(rows.length, 10);
    const plainDigest = createHash('sha256')
      .update(`${user.id}:${(backupCodes[0] as string).replace('-', '')}`)
      .digest('base64url');
    for (const row of rows) {
      assert.match(row.code_hash, /^k1\.[A-Za-z0-9_-]{43}$/);
      assert.notEqual(row.code_hash, plainDigest);
      for (const code of backupCodes) assert.ok(!row.code_sealed.includes(code.replace('-', '')));
    }
  });

  it('a code used concurrently succeeds exactly once', async () => {
    const user = await registerUser(server);
    const { backupCodes } = await enableTotp(server, user.token);
    const code = backupCodes[3] as string;
    const tickets = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const ticket = randomBytes(32).toString('hex');
        await harness(server, 'POST', '/auth/mfa-ticket', { ticket, user_id: user.id });
        return ticket;
      }),
    );
    const results = await Promise.all(tickets.map((ticket) => totpStep({ code, ticket })));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 400, 400, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) assert.deepEqual(errorCodes(r), ['code:INVALID_CODE']);

    // The same race through sudo mode: one proof, the rest refused.
    const { backupCodes: more } = await (async () => {
      const res = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
        auth: user.token,
        body: { regenerate: true, mfa_method: 'totp', mfa_code: backupCodes[4] },
      });
      assert.equal(res.status, 200);
      return { backupCodes: res.body.backup_codes.map((c: { code: string }) => c.code) as string[] };
    })();
    const sudoRace = await Promise.all(
      Array.from({ length: 6 }, () =>
        request(server, 'POST', '/v1/auth/sessions/logout', {
          auth: user.token,
          body: { session_id_hashes: [], mfa_method: 'totp', mfa_code: more[0] },
        }),
      ),
    );
    assert.deepEqual(sudoRace.map((r) => r.status).sort(), [204, 400, 400, 400, 400, 400]);
  });
});

describe('TOTP disable', () => {
  it('needs sudo, removes TOTP and the backup codes', async () => {
    const user = await registerUser(server);
    const { secret, backupCodes } = await enableTotp(server, user.token);
    const noSudo = await request(server, 'POST', '/v1/users/@me/mfa/totp/disable', {
      auth: user.token,
      body: { code: totpCode(secret) },
    });
    assert.equal(noSudo.status, 403);
    assert.deepEqual(noSudo.body, {
      code: 'SUDO_MODE_REQUIRED',
      message: 'Sudo mode required',
      has_mfa: true,
      methods: { totp: true, webauthn: false, password: false },
    });
    const wrong = await request(server, 'POST', '/v1/users/@me/mfa/totp/disable', {
      auth: user.token,
      body: { code: totpCode(secret), mfa_method: 'totp', mfa_code: 'zzzz-zzzz' },
    });
    assert.equal(wrong.status, 400);
    assert.deepEqual(errorCodes(wrong), ['mfa_code:INVALID_MFA_CODE']);

    const code = totpCode(secret);
    const ok = await request(server, 'POST', '/v1/users/@me/mfa/totp/disable', {
      auth: user.token,
      body: { code, mfa_method: 'totp', mfa_code: code },
    });
    assert.equal(ok.status, 204);
    assert.ok(ok.headers.get(SUDO_HEADER));
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.mfa_enabled, false);
    assert.deepEqual(me.body.authenticator_types, []);

    // Backup codes went with it: a login is a plain password login again.
    const res = await login(user);
    assert.equal(res.status, 200);
    assert.ok(res.body.token);
    const ticket = randomBytes(32).toString('hex');
    await harness(server, 'POST', '/auth/mfa-ticket', { ticket, user_id: user.id });
    const backup = await totpStep({ code: backupCodes[0] as string, ticket });
    assert.deepEqual(errorCodes(backup), ['code:TOTP_NOT_ENABLED']);

    const twice = await request(server, 'POST', '/v1/users/@me/mfa/totp/disable', {
      auth: user.token,
      body: { password: user.password },
    });
    assert.equal(twice.status, 400);
    assert.equal(twice.body.code, 'TWO_FA_NOT_ENABLED');
  });

  it('checks `code` when it is not the sudo code', async () => {
    const user = await registerUser(server);
    const { secret, backupCodes } = await enableTotp(server, user.token);
    const res = await request(server, 'POST', '/v1/users/@me/mfa/totp/disable', {
      auth: user.token,
      body: { code: '000000' === totpCode(secret) ? '111111' : '000000', mfa_method: 'totp', mfa_code: backupCodes[0] },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(errorCodes(res), ['code:INVALID_CODE']);
  });

  it('lets a passwordless account enable TOTP and then requires it for sudo', async () => {
    const account = await registerPasswordless(server);
    const before = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: account.token,
      body: { session_id_hashes: [] },
    });
    assert.equal(before.status, 204);
    await enableTotp(server, account.token);
    const afterEnable = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: account.token,
      body: { session_id_hashes: [] },
    });
    assert.equal(afterEnable.status, 403);
    assert.deepEqual(afterEnable.body.methods, { totp: true, webauthn: false, password: false });
  });
});
