/**
 * Sudo mode matrix (docs/mfa-and-sudo.md#sudo-mode, docs/mfa-and-sudo.md#sudo-mode): every sudo operation × account kind × proof variant.
 *
 * Operations are plain descriptors, so routes built by other issues are one more entry in OPERATIONS. A
 * descriptor names the request and the answer expected once sudo mode is satisfied; where an operation acts
 * on a resource (a credential, an application, a guild) it names one that does not exist, so that a
 * satisfied check shows as that resource's 404 and a refused one as 403, without destroying fixtures.
 * The expected outcome of each cell is computed from the decision order of docs/mfa-and-sudo.md#sudo-mode, never recorded.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { type ApiResponse, harness, registerUser, request } from '../support/client.ts';
import {
  enableTotp,
  jwtClaims,
  registerPasswordless,
  SUDO_HEADER,
  setClock,
  sudoProofViaTotp,
  tamper,
  totpCode,
  WEBAUTHN_ENV,
} from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

type AccountKind = 'mfa' | 'password' | 'bot' | 'passwordless';
type Variant = 'none' | 'valid' | 'expired' | 'tampered' | 'foreign' | 'password' | 'totp' | 'backup';

const ACCOUNT_KINDS: AccountKind[] = ['mfa', 'password', 'bot', 'passwordless'];
const VARIANTS: Variant[] = ['none', 'valid', 'expired', 'tampered', 'foreign', 'password', 'totp', 'backup'];
const MISSING_ID = '123456789012345678';

interface Account {
  kind: AccountKind;
  id: string;
  /** The Authorization header value. */
  auth: string;
  /** The real password, or a made-up one for accounts without. */
  password: string;
  totpSecret?: string;
  backupCodes: string[];
  proof?: { token: string; at: number };
}

interface Expectation {
  status: number;
  code?: string;
}

interface SudoOperation {
  name: string;
  method: string;
  path: string;
  mode: 'y' | 'y0';
  policy: 'user' | 'user-only' | 'admin';
  body?: (account: Account) => Record<string, unknown>;
  /** The answer once sudo mode is satisfied. */
  satisfied: (account: Account) => Expectation;
  /** After a satisfied call: the account changed (sessions revoked, factors gone) and is rebuilt. */
  spoils?: (account: Account, res: ApiResponse) => boolean;
  /** After a satisfied call: refresh what the fixture remembers (new backup codes). */
  refresh?: (account: Account, res: ApiResponse) => void;
}

const ok204 = (): Expectation => ({ status: 204 });
const ok200 = (): Expectation => ({ status: 200 });

const OPERATIONS: SudoOperation[] = [
  {
    name: 'POST /auth/sessions/logout',
    method: 'POST',
    path: '/v1/auth/sessions/logout',
    mode: 'y',
    policy: 'user-only',
    body: () => ({ session_id_hashes: [] }),
    satisfied: ok204,
  },
  {
    name: 'PATCH /users/@me {new_password}',
    method: 'PATCH',
    path: '/v1/users/@me',
    mode: 'y',
    policy: 'user',
    body: () => ({ new_password: `changed-${randomBytes(6).toString('hex')}` }),
    satisfied: ok200,
    spoils: (account) => account.kind !== 'bot',
  },
  {
    name: 'POST /users/@me/mfa/totp/disable',
    method: 'POST',
    path: '/v1/users/@me/mfa/totp/disable',
    mode: 'y',
    policy: 'user-only',
    satisfied: (account) => (account.kind === 'mfa' ? { status: 204 } : { status: 400, code: 'TWO_FA_NOT_ENABLED' }),
    spoils: (_account, res) => res.status === 204,
  },
  {
    name: 'POST /users/@me/mfa/backup-codes',
    method: 'POST',
    path: '/v1/users/@me/mfa/backup-codes',
    mode: 'y',
    policy: 'user-only',
    body: () => ({ regenerate: true }),
    satisfied: (account) => (account.kind === 'mfa' ? { status: 200 } : { status: 400, code: 'TWO_FA_NOT_ENABLED' }),
    refresh: (account, res) => {
      if (res.status === 200) account.backupCodes = res.body.backup_codes.map((c: { code: string }) => c.code);
    },
  },
  {
    name: 'POST /users/@me/mfa/webauthn/credentials/registration-options (y⁰)',
    method: 'POST',
    path: '/v1/users/@me/mfa/webauthn/credentials/registration-options',
    mode: 'y0',
    policy: 'user-only',
    satisfied: ok200,
  },
  {
    name: 'PATCH /users/@me/mfa/webauthn/credentials/{id}',
    method: 'PATCH',
    path: `/v1/users/@me/mfa/webauthn/credentials/${MISSING_ID}`,
    mode: 'y',
    policy: 'user-only',
    body: () => ({ name: 'Renamed' }),
    satisfied: () => ({ status: 404, code: 'UNKNOWN_WEBAUTHN_CREDENTIAL' }),
  },
  {
    name: 'DELETE /users/@me/mfa/webauthn/credentials/{id}',
    method: 'DELETE',
    path: `/v1/users/@me/mfa/webauthn/credentials/${MISSING_ID}`,
    mode: 'y',
    policy: 'user-only',
    satisfied: () => ({ status: 404, code: 'UNKNOWN_WEBAUTHN_CREDENTIAL' }),
  },
  // Routes of other issues.
  {
    name: 'POST /users/@me/disable (y⁰)',
    method: 'POST',
    path: '/v1/users/@me/disable',
    mode: 'y0',
    policy: 'user-only',
    satisfied: ok204,
    spoils: (_account, res) => res.status === 204,
  },
  {
    name: 'POST /users/@me/delete',
    method: 'POST',
    path: '/v1/users/@me/delete',
    mode: 'y',
    policy: 'user-only',
    satisfied: ok204,
    spoils: (_account, res) => res.status === 204,
  },
  {
    name: 'DELETE /users/@me/authorized-ips',
    method: 'DELETE',
    path: '/v1/users/@me/authorized-ips',
    mode: 'y',
    policy: 'user-only',
    satisfied: ok204,
  },
  {
    name: 'POST /users/@me/email-change/start',
    method: 'POST',
    path: '/v1/users/@me/email-change/start',
    mode: 'y',
    policy: 'user-only',
    satisfied: ok200,
  },
  {
    name: 'DELETE /oauth2/applications/{id}',
    method: 'DELETE',
    path: `/v1/oauth2/applications/${MISSING_ID}`,
    mode: 'y',
    policy: 'user-only',
    satisfied: () => ({ status: 404, code: 'UNKNOWN_APPLICATION' }),
  },
  {
    name: 'POST /oauth2/applications/{id}/bot/reset-token',
    method: 'POST',
    path: `/v1/oauth2/applications/${MISSING_ID}/bot/reset-token`,
    mode: 'y',
    policy: 'user-only',
    satisfied: () => ({ status: 404, code: 'UNKNOWN_APPLICATION' }),
  },
  {
    name: 'POST /oauth2/applications/{id}/client-secret/reset',
    method: 'POST',
    path: `/v1/oauth2/applications/${MISSING_ID}/client-secret/reset`,
    mode: 'y',
    policy: 'user-only',
    satisfied: () => ({ status: 404, code: 'UNKNOWN_APPLICATION' }),
  },
  {
    name: 'POST /admin/api-keys',
    method: 'POST',
    path: '/v1/admin/api-keys',
    mode: 'y',
    policy: 'admin',
    body: () => ({ name: 'matrix', acls: ['user:lookup'] }),
    satisfied: ok200,
  },
  {
    name: 'POST /guilds/{id}/delete',
    method: 'POST',
    path: `/v1/guilds/${MISSING_ID}/delete`,
    mode: 'y',
    policy: 'user-only',
    satisfied: () => ({ status: 404, code: 'UNKNOWN_GUILD' }),
  },
  {
    name: 'POST /guilds/{id}/transfer-ownership',
    method: 'POST',
    path: `/v1/guilds/${MISSING_ID}/transfer-ownership`,
    mode: 'y',
    policy: 'user-only',
    body: () => ({ new_owner_id: MISSING_ID }),
    satisfied: () => ({ status: 404, code: 'UNKNOWN_GUILD' }),
  },
];

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

// ---------------------------------------------------------------------------------------------------------
// Fixtures

/** Every fixture account holds the wildcard ACL so the Admin API operation reaches its sudo check. */
async function grantAdmin(id: string): Promise<void> {
  const res = await harness(server, 'POST', `/users/${id}/acls`, { acls: ['*'] });
  assert.equal(res.status, 200);
}

async function makeAccount(kind: AccountKind): Promise<Account> {
  if (kind === 'bot') {
    const owner = await registerUser(server);
    const app = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: owner.token,
      body: { name: `Matrix ${randomBytes(3).toString('hex')}` },
    });
    assert.equal(app.status, 200, app.text);
    return {
      kind,
      id: app.body.bot.id,
      auth: `Bot ${app.body.bot.token}`,
      password: 'not-a-password-1',
      backupCodes: [],
    };
  }
  if (kind === 'passwordless') {
    const account = await registerPasswordless(server);
    await grantAdmin(account.id);
    return { kind, id: account.id, auth: account.token, password: 'made-up-password-1', backupCodes: [] };
  }
  const user = await registerUser(server);
  await grantAdmin(user.id);
  const account: Account = { kind, id: user.id, auth: user.token, password: user.password, backupCodes: [] };
  if (kind === 'mfa') {
    const totp = await enableTotp(server, user.token);
    account.totpSecret = totp.secret;
    account.backupCodes = totp.backupCodes;
  }
  return account;
}

const FRESH_PROOF_MS = 4 * 60_000;

/**
 * A proof that the server would accept as a signature for this account. MFA accounts get theirs by
 * re-verifying TOTP; accounts without MFA get one left over from a time they had it (enable TOTP, take a
 * proof, disable TOTP), which is exactly the proof docs/mfa-and-sudo.md#sudo-mode says must no longer work. A bot cannot
 * hold TOTP, so its proof is signed by the server's own SudoMode.
 */
async function validProof(account: Account): Promise<string> {
  if (account.proof && Date.now() - account.proof.at < FRESH_PROOF_MS) return account.proof.token;
  let token: string;
  if (account.kind === 'mfa') {
    token = await sudoProofViaTotp(server, account.auth, account.totpSecret as string);
  } else if (account.kind === 'bot') {
    token = await server.app.services.sudo.mint(account.id);
  } else {
    const { secret } = await enableTotp(server, account.auth);
    token = await sudoProofViaTotp(server, account.auth, secret);
    const disabled = await request(server, 'POST', '/v1/users/@me/mfa/totp/disable', {
      auth: account.auth,
      headers: { [SUDO_HEADER]: token },
    });
    assert.equal(disabled.status, 204, disabled.text);
  }
  account.proof = { token, at: Date.now() };
  return token;
}

async function topUpBackupCodes(account: Account): Promise<void> {
  const res = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
    auth: account.auth,
    body: { regenerate: true, mfa_method: 'totp', mfa_code: totpCode(account.totpSecret as string) },
  });
  assert.equal(res.status, 200, res.text);
  account.backupCodes = res.body.backup_codes.map((c: { code: string }) => c.code);
}

let stranger: Account | undefined;
async function foreignProof(): Promise<string> {
  stranger ??= await makeAccount('mfa');
  return validProof(stranger);
}

interface PreparedVariant {
  headers: Record<string, string>;
  fields: Record<string, unknown>;
  sentProof?: string;
  /** Clock shift for this request only. */
  shiftMs?: number;
}

async function prepare(account: Account, variant: Variant): Promise<PreparedVariant> {
  switch (variant) {
    case 'none':
      return { headers: {}, fields: {} };
    case 'valid': {
      const proof = await validProof(account);
      return { headers: { [SUDO_HEADER]: proof }, fields: {}, sentProof: proof };
    }
    case 'expired': {
      const proof = await validProof(account);
      return { headers: { [SUDO_HEADER]: proof }, fields: {}, sentProof: proof, shiftMs: 5 * 60_000 + 1000 };
    }
    case 'tampered': {
      const proof = tamper(await validProof(account));
      return { headers: { [SUDO_HEADER]: proof }, fields: {}, sentProof: proof };
    }
    case 'foreign': {
      const proof = await foreignProof();
      return { headers: { [SUDO_HEADER]: proof }, fields: {}, sentProof: proof };
    }
    case 'password':
      return { headers: {}, fields: { password: account.password } };
    case 'totp': {
      const code = account.totpSecret ? totpCode(account.totpSecret) : '123456';
      return { headers: {}, fields: { mfa_method: 'totp', mfa_code: code } };
    }
    case 'backup': {
      if (account.kind === 'mfa' && account.backupCodes.length === 0) await topUpBackupCodes(account);
      const code = account.kind === 'mfa' ? account.backupCodes.shift() : 'abcd-efgh';
      assert.ok(code, 'the fixture ran out of backup codes');
      return { headers: {}, fields: { mfa_method: 'totp', mfa_code: code } };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The oracle: docs/mfa-and-sudo.md#sudo-mode's decision order.

type Decision =
  | { kind: 'policy'; expectation: Expectation }
  | { kind: 'satisfied'; header: 'none' | 'echo' | 'minted' }
  | { kind: 'required'; hasMfa: boolean; methods: { totp: boolean; webauthn: boolean; password: boolean } };

function decide(op: SudoOperation, account: AccountKind, variant: Variant): Decision {
  if (account === 'bot') {
    if (op.policy === 'user-only') return { kind: 'policy', expectation: { status: 403, code: 'ACCESS_DENIED' } };
    if (op.policy === 'admin') return { kind: 'policy', expectation: { status: 401, code: 'UNAUTHORIZED' } };
    return { kind: 'satisfied', header: 'none' };
  }
  const mfa = account === 'mfa';
  const noProof = op.mode === 'y0';
  if (mfa && variant === 'valid') return { kind: 'satisfied', header: noProof ? 'none' : 'echo' };
  if (mfa && (variant === 'totp' || variant === 'backup'))
    return { kind: 'satisfied', header: noProof ? 'none' : 'minted' };
  if (account === 'passwordless') return { kind: 'satisfied', header: 'none' };
  if (account === 'password' && variant === 'password') return { kind: 'satisfied', header: 'none' };
  return {
    kind: 'required',
    hasMfa: mfa,
    methods: { totp: mfa, webauthn: false, password: account === 'password' },
  };
}

// ---------------------------------------------------------------------------------------------------------

const accounts = new Map<AccountKind, Account>();
async function account(kind: AccountKind): Promise<Account> {
  let found = accounts.get(kind);
  if (!found) {
    found = await makeAccount(kind);
    accounts.set(kind, found);
  }
  return found;
}

async function runCell(op: SudoOperation, kind: AccountKind, variant: Variant): Promise<void> {
  const subject = await account(kind);
  const prepared = await prepare(subject, variant);
  const label = `${op.name} × ${kind} × ${variant}`;
  if (prepared.shiftMs) await setClock(server, prepared.shiftMs);
  const res = await request(server, op.method, op.path, {
    auth: subject.auth,
    body: { ...(op.body?.(subject) ?? {}), ...prepared.fields },
    headers: prepared.headers,
  });
  if (prepared.shiftMs) await setClock(server, 0);

  try {
    assertCell(label, decide(op, kind, variant), op, subject, prepared, res);
  } finally {
    // Even when a cell fails, later cells must not inherit an account whose sessions this call ended.
    if (res.status < 300) {
      op.refresh?.(subject, res);
      if (op.spoils?.(subject, res)) accounts.delete(kind);
    }
  }
}

function assertCell(
  label: string,
  decision: Decision,
  op: SudoOperation,
  subject: Account,
  prepared: PreparedVariant,
  res: ApiResponse,
): void {
  const header = res.headers.get(SUDO_HEADER);
  if (decision.kind === 'policy') {
    assert.equal(res.status, decision.expectation.status, `${label}: ${res.text}`);
    assert.equal(res.body.code, decision.expectation.code, label);
    assert.equal(header, null, `${label}: no proof header`);
    return;
  }
  if (decision.kind === 'required') {
    assert.equal(res.status, 403, `${label}: ${res.text}`);
    assert.deepEqual(
      res.body,
      {
        code: 'SUDO_MODE_REQUIRED',
        message: 'Sudo mode required',
        has_mfa: decision.hasMfa,
        methods: decision.methods,
      },
      label,
    );
    assert.equal(header, null, `${label}: no proof header`);
    return;
  }
  const expected = op.satisfied(subject);
  assert.equal(res.status, expected.status, `${label}: ${res.text}`);
  if (expected.code) assert.equal(res.body.code, expected.code, label);
  if (decision.header === 'none') assert.equal(header, null, `${label}: no proof header`);
  if (decision.header === 'echo') assert.equal(header, prepared.sentProof, `${label}: the valid proof is echoed`);
  if (decision.header === 'minted') {
    assert.ok(header, `${label}: a proof is minted`);
    assert.notEqual(header, prepared.sentProof);
    const claims = jwtClaims(header);
    assert.equal(claims.sub, subject.id, label);
    assert.equal(claims.type, 'sudo', label);
    assert.equal((claims.exp as number) - (claims.iat as number), 300, label);
    subject.proof = { token: header, at: Date.now() };
  }
}

for (const op of OPERATIONS) {
  describe(op.name, () => {
    it('the route exists: without a credential it answers 401, not the router 404', async () => {
      const res = await request(server, op.method, op.path, { body: {} });
      assert.equal(res.status, 401, res.text);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    });
    for (const kind of ACCOUNT_KINDS) {
      it(`${kind} account × every proof variant`, async () => {
        for (const variant of VARIANTS) await runCell(op, kind, variant);
      });
    }
  });
}

describe('sudo proofs in detail', () => {
  it('a minted proof works for another operation, is not extended by use, and dies after 5 minutes', async () => {
    const subject = await makeAccount('mfa');
    const proof = await sudoProofViaTotp(server, subject.auth, subject.totpSecret as string);
    await setClock(server, 4 * 60_000);
    const later = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
      auth: subject.auth,
      body: { regenerate: true },
      headers: { [SUDO_HEADER]: proof },
    });
    assert.equal(later.status, 200);
    assert.equal(later.headers.get(SUDO_HEADER), proof);
    await setClock(server, 5 * 60_000);
    const expired = await request(server, 'POST', '/v1/users/@me/mfa/backup-codes', {
      auth: subject.auth,
      body: { regenerate: true },
      headers: { [SUDO_HEADER]: proof },
    });
    assert.equal(expired.status, 403);
    assert.equal(expired.body.code, 'SUDO_MODE_REQUIRED');
  });

  it('refuses a proof signed with another secret or another algorithm', async () => {
    const subject = await makeAccount('mfa');
    const proof = await sudoProofViaTotp(server, subject.auth, subject.totpSecret as string);
    const [, payload] = proof.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const { SignJWT } = await import('jose');
    const claims = jwtClaims(proof);
    const otherKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-0123456789'));
    for (const forged of [none, otherKey, 'garbage', '']) {
      const res = await request(server, 'POST', '/v1/auth/sessions/logout', {
        auth: subject.auth,
        body: { session_id_hashes: [] },
        headers: { [SUDO_HEADER]: forged },
      });
      assert.equal(res.status, 403, forged);
      assert.equal(res.headers.get(SUDO_HEADER), null);
    }
  });

  it('answers a wrong password with INVALID_PASSWORD and a wrong code with INVALID_MFA_CODE', async () => {
    const password = await makeAccount('password');
    const wrong = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: password.auth,
      body: { session_id_hashes: [], password: 'not-the-password' },
    });
    assert.equal(wrong.status, 400);
    assert.deepEqual(
      wrong.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]),
      [['password', 'INVALID_PASSWORD']],
    );
    const short = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: password.auth,
      body: { session_id_hashes: [], password: 'x' },
    });
    assert.equal(short.status, 400);
    assert.equal(short.body.errors[0].code, 'INVALID_PASSWORD');

    const mfa = await makeAccount('mfa');
    for (const fields of [
      { mfa_method: 'totp', mfa_code: '000000' === totpCode(mfa.totpSecret as string) ? '111111' : '000000' },
      { mfa_method: 'totp' },
      { mfa_method: 'webauthn', webauthn_challenge: 'x', webauthn_response: {} },
      { mfa_method: 'sms', mfa_code: '123456' },
    ]) {
      const res = await request(server, 'POST', '/v1/auth/sessions/logout', {
        auth: mfa.auth,
        body: { session_id_hashes: [], ...fields },
      });
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.deepEqual(
        res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]),
        [['mfa_code', 'INVALID_MFA_CODE']],
      );
      assert.equal(res.headers.get(SUDO_HEADER), null);
    }
    // A malformed neighbour does not hide a good code.
    const mixed = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: mfa.auth,
      body: { session_id_hashes: [], password: 'x', mfa_method: 'totp', mfa_code: mfa.backupCodes[0] },
    });
    assert.equal(mixed.status, 204);
    assert.ok(mixed.headers.get(SUDO_HEADER));
  });
});
