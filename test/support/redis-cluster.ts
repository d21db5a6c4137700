import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './spawn.ts';

const run = promisify(execFile);

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, binary);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** `redis-server` and `redis-cli` (Debian's `redis-server`/`redis-tools`; Valkey's work the same), or undefined. */
export const REDIS_SERVER: string | undefined = onPath('redis-server');
const REDIS_CLI: string | undefined = onPath('redis-cli');
export const REDIS_CLUSTER_AVAILABLE = REDIS_SERVER !== undefined && REDIS_CLI !== undefined;

export interface TestRedisCluster {
  /** `host:port` of each master, as REDIS_CLUSTER_NODES takes them. */
  nodes: string[];
  /** One plain connection per master (for CLUSTER/PUBSUB/CLIENT commands on that node). */
  connect(node: string): Redis;
  close(): Promise<void>;
}

/**
 * A real three-master Redis cluster on loopback (no replicas): three `redis-server --cluster-enabled yes`
 * processes on free ports with throw-away directories, joined by `redis-cli --cluster create` (equal slot
 * ranges); resolves once every node reports `cluster_state:ok`. `close` kills the servers and removes the
 * directories.
 */
export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  if (!REDIS_SERVER || !REDIS_CLI) throw new Error('redis-server / redis-cli not found on PATH');
  const server = REDIS_SERVER;
  const base = await mkdtemp(join(tmpdir(), 'hearth-redis-cluster-'));
  const children: ChildProcess[] = [];
  const clients: Redis[] = [];
  const close = async () => {
    for (const client of clients) client.disconnect();
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    await rm(base, { recursive: true, force: true });
  };
  try {
    const nodes: string[] = [];
    for (let i = 0; i < masters; i++) {
      const [port, busPort] = [await freePort(), await freePort()];
      const dir = join(base, `node-${i}`);
      await mkdir(dir, { recursive: true });
      const child = spawn(
        server,
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          join(dir, 'nodes.conf'),
          '--cluster-node-timeout',
          '5000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
          '--protected-mode',
          'no',
        ],
        { stdio: 'ignore' },
      );
      children.push(child);
      nodes.push(`127.0.0.1:${port}`);
    }
    const connect = (node: string) => {
      const [host, port] = node.split(':');
      const client = new Redis({ host, port: Number(port), lazyConnect: false, maxRetriesPerRequest: 3 });
      client.on('error', () => {});
      clients.push(client);
      return client;
    };
    const probes = nodes.map(connect);
    await Promise.all(probes.map((probe) => waitUntil(async () => (await probe.ping()) === 'PONG', 10_000)));
    await run(REDIS_CLI, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes']);
    await Promise.all(
      probes.map((probe) =>
        waitUntil(async () => ((await probe.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'), 20_000),
      ),
    );
    return { nodes, connect, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // Not answering yet.
    }
    if (Date.now() > deadline) throw new Error('the Redis cluster did not come up');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The cluster backend of the shared-state tests runs in the Redis leg (TEST_REDIS_URL set) or with
 * TEST_REDIS_CLUSTER=1, when the binaries are there.
 */
export const TEST_REDIS_CLUSTER =
  REDIS_CLUSTER_AVAILABLE && (Boolean(process.env.TEST_REDIS_URL) || process.env.TEST_REDIS_CLUSTER === '1');

let shared: Promise<TestRedisCluster> | undefined;

/** One cluster per test file, started on first use; `closeSharedRedisCluster` (in a root `after`) stops it. */
export function sharedRedisCluster(): Promise<TestRedisCluster> {
  shared ??= startRedisCluster();
  return shared;
}

export async function closeSharedRedisCluster(): Promise<void> {
  const started = await shared?.catch(() => undefined);
  shared = undefined;
  await started?.close();
}

/** REDIS_CLUSTER_NODES / `openRedisClusterState` seeds of a test cluster. */
export function clusterSeeds(cluster: TestRedisCluster): string[] {
  return cluster.nodes.map((node) => `redis://${node}`);
}
