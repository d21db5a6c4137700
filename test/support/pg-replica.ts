import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './spawn.ts';

const run = promisify(execFile);

/** Debian's PostgreSQL server binaries (`postgresql` package), or undefined when absent. */
export const PG_BIN: string | undefined = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((bin) => existsSync(join(bin, 'pg_basebackup')));
})();

export interface ReplicatedPostgres {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops applying WAL on the replica (it keeps answering reads, with what it had): a lag made on purpose. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Waits until the replica has applied everything the primary has written so far. */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A PostgreSQL primary and a streaming replica of it, each its own throw-away cluster on loopback, started
 * with Debian's binaries (as the `postgres` user when the tests run as root, since PostgreSQL refuses root).
 */
export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL server binaries');
  const bin = PG_BIN;
  const asRoot = process.getuid?.() === 0;
  const base = await mkdtemp(join(tmpdir(), 'hearth-pg-replica-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(base, Number(stdout.trim()), Number(gid.trim()));
  }
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);
  const primaryDir = join(base, 'primary');
  const replicaDir = join(base, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const settings = (port: number) =>
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${base}'\nfsync = off\nmax_wal_senders = 5\nhot_standby_feedback = on\n`;
  const started: string[] = [];
  const stopAll = async () => {
    for (const dir of started.reverse()) await pgRun('pg_ctl', ['-D', dir, '-m', 'immediate', 'stop']).catch(() => {});
    await rm(base, { recursive: true, force: true });
  };
  try {
    await pgRun('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    await appendFile(join(primaryDir, 'postgresql.conf'), settings(primaryPort));
    await appendFile(join(primaryDir, 'pg_hba.conf'), '\nhost replication all 127.0.0.1/32 trust\n');
    await pgRun('pg_ctl', ['-D', primaryDir, '-l', join(base, 'primary.log'), '-w', 'start']);
    started.push(primaryDir);
    await pgRun('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres'],
      ...['-D', replicaDir, '-R', '-X', 'stream', '--no-sync'],
    ]);
    await appendFile(join(replicaDir, 'postgresql.conf'), settings(replicaPort));
    await pgRun('pg_ctl', ['-D', replicaDir, '-l', join(base, 'replica.log'), '-w', 'start']);
    started.push(replicaDir);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  const query = async (url: string, sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    primaryUrl,
    replicaUrl,
    pauseReplay: async () => {
      await query(replicaUrl, 'SELECT pg_wal_replay_pause()');
    },
    resumeReplay: async () => {
      await query(replicaUrl, 'SELECT pg_wal_replay_resume()');
    },
    async caughtUp() {
      const [{ lsn }] = (await query(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS lsn')) as [{ lsn: string }];
      for (let i = 0; i < 200; i++) {
        const [row] = (await query(replicaUrl, `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS done`)) as {
          done: boolean;
        }[];
        if (row?.done) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the replica did not catch up');
    },
    close: stopAll,
  };
}
