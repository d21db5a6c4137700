import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from '../support/client.ts';
import { enableTotp, totpCode } from '../support/mfa.ts';
import { freePort, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';

/**
 * The embedded default across a restart: the real entrypoint with PGlite on disk, stopped with SIGTERM
 * and started again on the same data directory (the second time configured by CLI flags instead of env).
 */
let dataDir: string;
const running: Spawned[] = [];

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hearth-restart-'));
});
after(async () => {
  for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

async function stop(spawned: Spawned): Promise<void> {
  spawned.child.kill('SIGTERM');
  assert.equal(await spawned.exited, 0, `SIGTERM must end the process cleanly:\n${spawned.stderr()}`);
}

describe('restart on the embedded default', { timeout: 300_000 }, () => {
  it('keeps users and sessions', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const first = spawnEntrypoint({
      PORT: String(port),
      HOST: '127.0.0.1',
      HEARTH_DATA_DIR: dataDir,
      HEARTH_PUBLIC_URL: url,
      HEARTH_LOG_LEVEL: 'info',
    });
    running.push(first);
    await waitForHealth(url, first);
    assert.ok(existsSync(join(dataDir, 'pglite')), 'PGlite keeps its files in the data directory');

    const email = `restart-${Date.now()}@example.test`;
    const password = 'restart-password-1';
    const registered = await request({ url }, 'POST', '/v1/auth/register', { body: { email, password } });
    assert.equal(registered.status, 200, registered.text);
    const token: string = registered.body.token;
    const userId: string = registered.body.user_id;
    const login = await request({ url }, 'POST', '/v1/auth/login', { body: { email, password } });
    assert.equal(login.status, 200, login.text);
    const revoked: string = login.body.token;
    assert.equal((await request({ url }, 'POST', '/v1/auth/logout', { auth: revoked })).status, 204);
    // The TOTP secret is stored sealed under the generated HEARTH_MFA_SECRET, which must survive the restart.
    const { secret: totpSecret } = await enableTotp({ url }, token);

    // Development defaults announce themselves on the first start.
    const firstOut = first.stdout();
    for (const setting of [
      'HEARTH_SUDO_SECRET',
      'HEARTH_MEDIA_PROXY_SECRET',
      'HEARTH_RELAY_SECRET',
      'HEARTH_MFA_SECRET',
      'DATABASE_URL',
    ])
      assert.match(firstOut, new RegExp(`"level":"warn".*${setting}`), `a warning names ${setting}`);
    await stop(first);

    const port2 = await freePort();
    const url2 = `http://127.0.0.1:${port2}`;
    const second = spawnEntrypoint({ HEARTH_LOG_LEVEL: 'info' }, [
      '--port',
      String(port2),
      '--host=127.0.0.1',
      '--data-dir',
      dataDir,
      '--public-url',
      url2,
    ]);
    running.push(second);
    await waitForHealth(url2, second);

    const me = await request({ url: url2 }, 'GET', '/v1/users/@me', { auth: token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.id, userId);
    assert.equal(me.body.email, email);
    const stillRevoked = await request({ url: url2 }, 'GET', '/v1/users/@me', { auth: revoked });
    assert.equal(stillRevoked.status, 401);
    const ticketed = await request({ url: url2 }, 'POST', '/v1/auth/login', { body: { email, password } });
    assert.equal(ticketed.status, 200, ticketed.text);
    assert.equal(ticketed.body.mfa, true);
    // The next step's code: the one that enabled TOTP may still be current, and the replay guard is on.
    const again = await request({ url: url2 }, 'POST', '/v1/auth/login/mfa/totp', {
      body: { code: totpCode(totpSecret, 30_000), ticket: ticketed.body.ticket },
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.user_id, userId);
    const sessions = await request({ url: url2 }, 'GET', '/v1/auth/sessions', { auth: again.body.token });
    assert.equal(sessions.status, 200);
    assert.equal(sessions.body.length, 2);

    // Discovery announces the configured base, set by flag this time.
    const discovery = await request({ url: url2 }, 'GET', '/.well-known/service');
    assert.equal(discovery.body.endpoints.api_public, url2);

    // The development default is announced at every start, not only when it is first generated.
    assert.match(second.stdout(), /"level":"warn".*HEARTH_SUDO_SECRET/);
    await stop(second);

    // Structured request logs never carry a credential.
    for (const out of [first.stdout(), second.stdout()]) {
      assert.match(out, /"msg":"request"/);
      for (const secret of [token, revoked, again.body.token, password]) assert.ok(!out.includes(secret));
    }
    assert.equal(first.stderr(), '');
    assert.equal(second.stderr(), '');
  });
});
