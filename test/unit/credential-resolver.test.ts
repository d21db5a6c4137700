import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAuthorization } from '../../src/http/auth/authorization.ts';
import type {
  CredentialBinding,
  CredentialKind,
  CredentialKinds,
  FoundCredential,
  PresentedCredential,
} from '../../src/http/auth/credential-kind.ts';
import { AUTH_INVALIDATION_TOPIC, CredentialResolver } from '../../src/http/auth/credential-resolver.ts';
import type { Principal } from '../../src/identity/principal.ts';
import type { UserRecord, UserRow, UserSnapshots } from '../../src/identity/user-record.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { InProcessEventBus } from '../../src/platform/state/event-bus.ts';

/** The resolver alone (docs/architecture.md#credential-kinds): kind dispatch, cache, race guard, invalidation. */

const user = (id: string, username = `user${id}`): UserRecord => ({ id, username }) as UserRecord;

/** The users domain's snapshot cache, reduced to what the resolver relies on. */
class FakeUsers implements UserSnapshots {
  version = 0;
  readonly rows = new Map<string, UserRecord>();
  readonly snapshots = new Map<string, UserRecord>();
  reads = 0;

  remember(row: UserRow, seenVersion: number): UserRecord {
    const record = user(row.id, row.username);
    if (seenVersion === this.version) this.snapshots.set(row.id, record);
    return record;
  }
  cached(id: string): UserRecord | undefined {
    return this.snapshots.get(id);
  }
  async findById(id: string): Promise<UserRecord | undefined> {
    this.reads += 1;
    const found = this.rows.get(id);
    if (found) this.snapshots.set(id, found);
    return found;
  }
  forget(id: string): void {
    this.version += 1;
    this.snapshots.delete(id);
  }
  forgetAll(): void {
    this.version += 1;
    this.snapshots.clear();
  }
}

class FakeBinding implements CredentialBinding {
  touches: number[] = [];
  constructor(
    readonly userId: string,
    readonly form: string,
    readonly expiresAt: number | null = null,
  ) {}
  principal(owner: UserRecord): Principal {
    return { kind: 'bot', user: owner, applicationId: this.form };
  }
  touch(at: number): void {
    this.touches.push(at);
  }
}

/** A kind whose table is a map of digest → binding; a look-up may be held open to race it. */
class FakeKind<C extends PresentedCredential> implements CredentialKind<C> {
  readonly table = new Map<string, FakeBinding>();
  lookups: string[] = [];
  implausible = new Set<string>();
  hold: Promise<void> | undefined;
  joinedRow: UserRow | undefined;

  plausible(_credential: C, tokenHash: string): boolean {
    return !this.implausible.has(tokenHash);
  }
  async lookup(credential: C, tokenHash: string): Promise<FoundCredential | undefined> {
    this.lookups.push(credential.kind);
    const binding = this.table.get(tokenHash);
    await this.hold;
    if (!binding) return undefined;
    return this.joinedRow ? { binding, userRow: this.joinedRow } : { binding };
  }
}

function setup() {
  const kinds = {
    session: new FakeKind<Extract<PresentedCredential, { kind: 'session' }>>(),
    bot: new FakeKind<Extract<PresentedCredential, { kind: 'bot' }>>(),
    bearer: new FakeKind<Extract<PresentedCredential, { kind: 'bearer' }>>(),
    admin: new FakeKind<Extract<PresentedCredential, { kind: 'admin' }>>(),
  } satisfies CredentialKinds;
  const users = new FakeUsers();
  users.rows.set('1', user('1'));
  users.rows.set('2', user('2'));
  const bus = new InProcessEventBus();
  let now = 1_000_000;
  const clock = { now: () => now };
  const resolver = new CredentialResolver(kinds, users, bus, clock);
  return { kinds, users, bus, resolver, advance: (ms: number) => (now += ms), now: () => now };
}

const SESSION = 'flx_abcdefghijklmnopqrstuvwxyz0123456789';
const BOT = '1234567890123456.secret';
const BEARER = 'some-access-token';
const ADMIN = 'fa_1234567890123456_abcdefghijklmnopqrstuvwxyzABCDEF';
const session = parseAuthorization(SESSION, { adminArea: false });
const bot = parseAuthorization(`Bot ${BOT}`, { adminArea: false });
const bearer = parseAuthorization(`Bearer ${BEARER}`, { adminArea: false });
const admin = parseAuthorization(`Admin ${ADMIN}`, { adminArea: true });

describe('CredentialResolver', () => {
  it('hands each form of credential to its own kind, then answers warm hits synchronously with one principal', async () => {
    const { kinds, resolver } = setup();
    kinds.session.table.set(digest(SESSION), new FakeBinding('1', 'session'));
    kinds.bot.table.set(digest(BOT), new FakeBinding('2', 'bot'));
    kinds.bearer.table.set(digest(BEARER), new FakeBinding('1', 'bearer'));
    kinds.admin.table.set(digest(ADMIN), new FakeBinding('2', 'admin'));

    for (const [credential, userId, form] of [
      [session, '1', 'session'],
      [bot, '2', 'bot'],
      [bearer, '1', 'bearer'],
      [admin, '2', 'admin'],
    ] as const) {
      const cold = resolver.resolve(credential);
      assert.ok(cold instanceof Promise, `${form}: a cold credential is looked up`);
      const principal = await cold;
      assert.equal(principal?.user.id, userId);
      assert.equal(principal?.kind === 'bot' && principal.applicationId, form, 'built by the binding its kind read');
      const warm = resolver.resolve(credential);
      assert.ok(!(warm instanceof Promise), `${form}: a warm hit pays no promise`);
      assert.equal(warm, principal, 'the same principal object while the user snapshot is the same');
    }
    assert.deepEqual(
      [kinds.session.lookups, kinds.bot.lookups, kinds.bearer.lookups, kinds.admin.lookups],
      [['session'], ['bot'], ['bearer'], ['admin']],
    );
    // The same token under another form is another credential: not the session kind's cached binding.
    kinds.bearer.table.set(digest(SESSION), new FakeBinding('2', 'bearer'));
    assert.equal((await resolver.resolve({ kind: 'bearer', token: SESSION }))?.user.id, '2');
    assert.equal((resolver.resolve(session) as Principal).user.id, '1');
    assert.equal(resolver.resolve({ kind: 'none' }), undefined);
    assert.equal(resolver.resolve({ kind: 'invalid' }), undefined);
  });

  it('refuses an implausible token without a look-up and remembers an unknown one briefly', async (t) => {
    // The binding cache's own lifetimes run on the machine clock.
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const { kinds, resolver } = setup();
    kinds.bot.implausible.add(digest(BOT));
    assert.equal(resolver.resolve(bot), undefined, 'refused synchronously');
    assert.deepEqual(kinds.bot.lookups, []);

    assert.equal(await resolver.resolve(bearer), undefined);
    assert.equal(resolver.resolve(bearer), undefined, 'the unknown answer is cached');
    assert.deepEqual(kinds.bearer.lookups, ['bearer']);
    kinds.bearer.table.set(digest(BEARER), new FakeBinding('1', 'bearer'));
    t.mock.timers.tick(4_999);
    assert.equal(resolver.resolve(bearer), undefined, 'still cached');
    t.mock.timers.tick(1);
    assert.equal((await resolver.resolve(bearer))?.user.id, '1', 'after 5 s it is looked up again');
    assert.deepEqual(kinds.bearer.lookups, ['bearer', 'bearer']);
  });

  it('does not cache a look-up that raced a revocation of its digest or of its user', async () => {
    for (const revocation of [{ tokenHash: digest(SESSION) }, { userId: '1' }, { all: true }]) {
      const { kinds, resolver } = setup();
      kinds.session.table.set(digest(SESSION), new FakeBinding('1', 'session'));
      let release = () => {};
      kinds.session.hold = new Promise((done) => {
        release = done;
      });
      const racing = resolver.resolve(session);
      assert.ok(racing instanceof Promise);
      // The row was read before the revocation deleted it; the answer is given but must not be remembered.
      await resolver.invalidate(revocation);
      kinds.session.table.delete(digest(SESSION));
      release();
      assert.equal((await racing)?.user.id, '1', JSON.stringify(revocation));
      kinds.session.hold = undefined;
      assert.equal(await resolver.resolve(session), undefined, `${JSON.stringify(revocation)}: read again`);
      assert.equal(kinds.session.lookups.length, 2);
    }
  });

  it('keeps a joined user row unless a user change raced the read', async () => {
    const { kinds, users, resolver } = setup();
    kinds.session.table.set(digest(SESSION), new FakeBinding('1', 'session'));
    kinds.session.joinedRow = { id: '1', username: 'joined' } as UserRow;
    assert.equal((await resolver.resolve(session))?.user.username, 'joined');
    assert.equal(users.reads, 0, 'the joined row saved the user read');

    const other = setup();
    other.kinds.session.table.set(digest(SESSION), new FakeBinding('1', 'session'));
    other.kinds.session.joinedRow = { id: '1', username: 'stale' } as UserRow;
    let release = () => {};
    other.kinds.session.hold = new Promise((done) => {
      release = done;
    });
    const racing = other.resolver.resolve(session);
    other.users.forget('2');
    release();
    assert.equal((await racing)?.user.username, 'user1', 'a row read across a user change is not kept: read again');
    assert.equal(other.users.reads, 1);
  });

  it('drops a revoked digest under every form, in every process on the bus', async () => {
    const { kinds, users, bus, resolver } = setup();
    const peer = new CredentialResolver(kinds, users, bus, { now: () => 1_000_000 });
    kinds.session.table.set(digest(SESSION), new FakeBinding('1', 'session'));
    await resolver.resolve(session);
    await peer.resolve(session);
    kinds.session.table.delete(digest(SESSION));
    const heard: unknown[] = [];
    bus.subscribe(AUTH_INVALIDATION_TOPIC, (message) => heard.push(message));
    await resolver.invalidate({ tokenHash: digest(SESSION) });
    assert.deepEqual(heard, [{ tokenHash: digest(SESSION) }]);
    assert.equal(await resolver.resolve(session), undefined);
    assert.equal(await peer.resolve(session), undefined, 'the peer dropped it on the bus message');

    // An Admin API key is revoked by its digest too (the same message shape, another form).
    kinds.admin.table.set(digest(ADMIN), new FakeBinding('2', 'admin'));
    await resolver.resolve(admin);
    kinds.admin.table.delete(digest(ADMIN));
    await resolver.invalidate({ tokenHash: digest(ADMIN) });
    assert.equal(await resolver.resolve(admin), undefined);
  });

  it('forgets a user: their bindings and snapshot, so a change of user shows at once', async () => {
    const { kinds, users, resolver } = setup();
    kinds.session.table.set(digest(SESSION), new FakeBinding('1', 'session'));
    kinds.bot.table.set(digest(BOT), new FakeBinding('2', 'bot'));
    const before = await resolver.resolve(session);
    await resolver.resolve(bot);
    users.rows.set('1', user('1', 'renamed'));
    await resolver.invalidate({ userId: '1' });
    const after = await resolver.resolve(session);
    assert.equal(after?.user.username, 'renamed');
    assert.notEqual(after, before, 'a new snapshot gives a new principal');
    assert.equal(kinds.session.lookups.length, 2, "user 1's binding was dropped");
    assert.ok(!(resolver.resolve(bot) instanceof Promise), "user 2's binding stayed");
  });

  it('refuses an expired binding, cached or not, and records a use at most once a minute', async () => {
    const { kinds, resolver, advance, now } = setup();
    const expiring = new FakeBinding('1', 'bearer', now() + 90_000);
    kinds.bearer.table.set(digest(BEARER), expiring);
    assert.equal((await resolver.resolve(bearer))?.user.id, '1');
    resolver.resolve(bearer);
    assert.deepEqual(expiring.touches, [now()]);
    advance(60_000);
    resolver.resolve(bearer);
    assert.deepEqual(expiring.touches, [now() - 60_000, now()]);
    advance(30_000);
    assert.equal(resolver.resolve(bearer), undefined, 'expired while cached');

    kinds.admin.table.set(digest(ADMIN), new FakeBinding('2', 'admin', now()));
    assert.equal(await resolver.resolve(admin), undefined, 'expired when read');
  });
});
