import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { GatewayClient } from '../gateway/gateway-client.ts';
import { registerUser, request } from '../support/client.ts';
import {
  dockerignore,
  execForm,
  interpolate,
  interpolatedNames,
  readDockerfile,
  readYaml,
} from '../support/packaging-files.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { startTestS3 } from '../support/s3-server.ts';
import { freePort, type Spawned } from '../support/spawn.ts';

// The Dockerfile and compose.yaml, kept honest without a Docker daemon: their invariants are checked, and the
// image's build and start steps run as plain commands (docs/deployment.md, "Docker and compose").

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const stages = readDockerfile(read('Dockerfile'));
const compose = readYaml(read('compose.yaml')) as any;
const services = compose.services as Record<string, any>;
const SECRETS = ['HEARTH_SUDO_SECRET', 'HEARTH_MEDIA_PROXY_SECRET', 'HEARTH_RELAY_SECRET', 'HEARTH_MFA_SECRET'];
const SHARED = [
  'HEARTH_PUBLIC_URL',
  'HEARTH_TRUSTED_PROXIES',
  'DATABASE_URL',
  'REDIS_URL',
  'HEARTH_S3_BUCKET',
  'HEARTH_S3_ENDPOINT',
  'HEARTH_S3_REGION',
  'HEARTH_S3_FORCE_PATH_STYLE',
  'HEARTH_S3_ACCESS_KEY_ID',
  'HEARTH_S3_SECRET_ACCESS_KEY',
  ...SECRETS,
];

/** The settings table of docs/configuration.md (kept equal to `SETTINGS` by test/unit/config-doc). */
const documentedSettings = new Set(
  [...read('docs/configuration.md').matchAll(/^\| `([A-Z0-9_]+)` \| `--/gm)].map((m) => m[1] as string),
);

function stage(name: string | undefined) {
  const found = name === undefined ? stages.at(-1) : stages.find((s) => s.name === name);
  assert.ok(found, `Dockerfile stage ${name ?? '(final)'}`);
  return found;
}
const args = (s: ReturnType<typeof stage>, keyword: string) =>
  s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
/** `ENV A=1 B=2` of a stage. */
function stageEnv(s: ReturnType<typeof stage>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of args(s, 'ENV'))
    for (const m of line.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[m[1] as string] = (m[2] as string).replace(/^"|"$/g, '');
  return env;
}
/** The packages an `apt-get update && apt-get install -y …` RUN line installs (undefined for any other line). */
function aptPackages(command: string): string[] | undefined {
  const install = /^apt-get update && apt-get install -y (?:--no-install-recommends )?([\w.+-]+(?: [\w.+-]+)*)$/.exec(
    command,
  );
  return install?.[1]?.split(' ');
}
const hearthEnv = (name: string) => services[name].environment as Record<string, string | number>;

describe('Dockerfile', () => {
  const build = stage('build');
  const runtime = stage(undefined);

  it('builds with npm ci on node 20 and keeps only production packages for a runtime stage of its own', () => {
    assert.equal(build.from, 'node:20-bookworm-slim');
    assert.equal(runtime.from, 'node:20-bookworm-slim');
    assert.notEqual(runtime, build);
    const runs = args(build, 'RUN').map((r) => r.replace(/^(--mount=\S+\s+)+/, ''));
    const npmCiAt = runs.findIndex((r) => /^npm ci\b/.test(r));
    assert.ok(npmCiAt >= 0, 'the build installs with npm ci');
    // Before it, only the system packages npm ci builds native addons with (node-gyp: Python, make, a compiler).
    assert.deepEqual(runs.slice(0, npmCiAt).map(aptPackages), [['python3', 'make', 'g++']]);
    assert.ok(
      runs.some((r) => /^npm prune --omit=dev\b/.test(r)),
      'development packages are pruned',
    );
    const copies = args(runtime, 'COPY');
    assert.ok(copies.length > 0 && copies.every((c) => c.startsWith('--from=build ')), 'the runtime copies the build');
  });

  it('runs as an unprivileged user that it creates, with /data its only writable place', () => {
    const users = args(runtime, 'USER');
    assert.equal(users.length, 1);
    const user = users[0] as string;
    const uid = user.split(':')[0] as string;
    assert.ok(uid !== '0' && uid !== 'root', `USER ${user}`);
    assert.match(uid, /^\d+$/, 'numeric, so runAsNonRoot can check it');
    assert.ok(
      args(runtime, 'RUN').some((r) => r.includes(`useradd`) && r.includes(`--uid ${uid}`)),
      `a user with uid ${uid} is created`,
    );
    const userAt = runtime.instructions.findIndex((i) => i.keyword === 'USER');
    const cmdAt = runtime.instructions.findIndex((i) => i.keyword === 'CMD');
    assert.ok(userAt >= 0 && userAt < cmdAt);
    // Nothing is copied as the server's own: the code stays read-only to it.
    assert.ok(args(runtime, 'COPY').every((c) => !c.includes('--chown')));
    const env = stageEnv(runtime);
    assert.equal(env.HEARTH_DATA_DIR, '/data');
    assert.deepEqual(args(runtime, 'VOLUME'), ['["/data"]']);
    assert.ok(args(runtime, 'RUN').some((r) => r.includes('chown hearth:hearth /data')));
    for (const name of Object.keys(env))
      assert.ok(name === 'NODE_ENV' || documentedSettings.has(name), `${name} is a Hearth setting`);
    assert.deepEqual(args(runtime, 'EXPOSE'), [env.PORT]);
  });

  it('execs node directly, so SIGTERM reaches the server, and checks /_health with node', () => {
    assert.deepEqual(args(runtime, 'ENTRYPOINT'), []);
    const cmd = args(runtime, 'CMD');
    assert.equal(cmd.length, 1);
    assert.deepEqual(execForm(cmd[0] as string), ['node', 'dist/main.js']);
    const checks = args(runtime, 'HEALTHCHECK');
    assert.equal(checks.length, 1);
    const check = /^((?:--[\w-]+=\S+\s+)*)CMD (.*)$/.exec(checks[0] as string);
    assert.ok(check, checks[0]);
    const probe = execForm(check[2] as string);
    assert.equal(probe?.[0], 'node');
    assert.match(probe?.[2] as string, /\/_health/);
  });

  it('.dockerignore keeps local builds, dependencies, data and secrets out of the context', () => {
    const ignored = dockerignore(read('.dockerignore'));
    for (const path of ['node_modules/x', 'web/node_modules/x', 'dist/main.js', 'web/dist/index.html', '.git/HEAD'])
      assert.ok(ignored(path), `${path} ignored`);
    for (const path of ['data/pglite/x', '.env', 'server.log']) assert.ok(ignored(path), `${path} ignored`);
    for (const path of ['src/main.ts', 'web/index.html', 'scripts/build-server.mjs', 'package-lock.json'])
      assert.ok(!ignored(path), `${path} sent`);
  });
});

describe('compose.yaml', () => {
  it('runs two Hearth processes from this image with distinct worker ids, and the backing services', () => {
    for (const name of ['hearth-1', 'hearth-2', 'postgres', 'valkey', 'minio', 'minio-init', 'coturn', 'caddy'])
      assert.ok(services[name], `service ${name}`);
    for (const name of ['hearth-1', 'hearth-2']) assert.equal(services[name].build, '.');
    assert.equal(services.postgres.image, 'postgres:16');
    assert.equal(services.valkey.image, 'valkey/valkey:8');
    assert.match(services.minio.image, /^minio\/minio:/);
    assert.match(services.coturn.image, /^coturn\/coturn:/);
    assert.match(services.caddy.image, /^caddy:2/);
    assert.notEqual(hearthEnv('hearth-1').HEARTH_WORKER_ID, hearthEnv('hearth-2').HEARTH_WORKER_ID);
    assert.notDeepEqual(services['hearth-1'].volumes, services['hearth-2'].volumes);
  });

  it('gives the Hearth processes real settings only, the same shared ones, and no secret in the file', () => {
    const one = hearthEnv('hearth-1');
    const two = hearthEnv('hearth-2');
    for (const env of [one, two]) {
      for (const name of Object.keys(env))
        assert.ok(documentedSettings.has(name), `${name} is a setting of docs/configuration.md`);
      for (const name of SHARED) assert.ok(env[name] !== undefined && env[name] !== '', `${name} is set`);
    }
    for (const name of SHARED) assert.equal(one[name], two[name], `${name} is shared`);
    const single = /^\$\{(\w+)(:\?[^}]+)?\}$/;
    for (const name of [...SECRETS, 'HEARTH_S3_SECRET_ACCESS_KEY', 'HEARTH_VOICE_TURN_CREDENTIAL'])
      assert.match(String(one[name]), single, `${name} comes from .env`);
    for (const name of ['DATABASE_URL', 'REDIS_URL'])
      assert.match(String(one[name]), /^\w+:\/\/[\w-]*:\$\{\w+(:\?[^}]+)?\}@/, `${name}'s password comes from .env`);
    for (const [service, key] of [
      ['postgres', 'POSTGRES_PASSWORD'],
      ['valkey', 'VALKEY_PASSWORD'],
      ['minio', 'MINIO_ROOT_PASSWORD'],
    ] as const)
      assert.match(String(services[service].environment[key]), single, `${service} ${key}`);
    // Every variable the file reads is described in the example .env, which holds no secret value.
    const example = read('deploy/env.example');
    for (const name of interpolatedNames(read('compose.yaml')))
      assert.match(example, new RegExp(`^${name}=`, 'm'), `${name} in deploy/env.example`);
    for (const m of example.matchAll(/^(\w*(?:SECRET|PASSWORD)\w*)=(.*)$/gm))
      assert.equal(m[2], '', `${m[1]} is left empty in the example`);
  });

  it('starts Hearth after its dependencies are healthy, each of which has a health check', () => {
    for (const name of ['hearth-1', 'hearth-2']) {
      const deps = services[name].depends_on;
      assert.deepEqual(deps, {
        postgres: { condition: 'service_healthy' },
        valkey: { condition: 'service_healthy' },
        'minio-init': { condition: 'service_completed_successfully' },
      });
    }
    for (const name of ['postgres', 'valkey', 'minio']) assert.ok(services[name].healthcheck?.test, `${name}`);
    assert.deepEqual(services['minio-init'].depends_on, { minio: { condition: 'service_healthy' } });
    // The image's own HEALTHCHECK is what caddy waits for.
    assert.deepEqual(services.caddy.depends_on, {
      'hearth-1': { condition: 'service_healthy' },
      'hearth-2': { condition: 'service_healthy' },
    });
  });

  it('points the processes at the compose services, behind a proxy they trust, with the bucket minio-init makes', () => {
    const env = hearthEnv('hearth-1');
    assert.match(String(env.DATABASE_URL), /@postgres:5432\/hearth$/);
    assert.equal(services.postgres.environment.POSTGRES_DB, 'hearth');
    assert.match(String(env.REDIS_URL), /@valkey:6379$/);
    assert.equal(env.HEARTH_S3_ENDPOINT, 'http://minio:9000');
    const bucket = String(env.HEARTH_S3_BUCKET);
    assert.match(read('deploy/minio-init.sh'), new RegExp(`mc mb --ignore-existing local/${bucket}\\n`));
    const policy = JSON.parse(read('deploy/minio-hearth-policy.json'));
    assert.deepEqual(
      policy.Statement.flatMap((s: { Resource: string[] }) => s.Resource),
      [`arn:aws:s3:::${bucket}/*`, `arn:aws:s3:::${bucket}`],
    );
    // Caddy's fixed address is the one trusted proxy, inside the network's subnet.
    const caddyAddress = services.caddy.networks.hearth.ipv4_address as string;
    assert.equal(env.HEARTH_TRUSTED_PROXIES, `${caddyAddress}/32`);
    const subnet = compose.networks.hearth.ipam.config[0].subnet as string;
    assert.equal(subnet, `${caddyAddress.split('.').slice(0, 3).join('.')}.0/24`);
    const caddyfile = read('deploy/Caddyfile');
    const port = stageEnv(stage(undefined)).PORT;
    assert.match(caddyfile, new RegExp(`reverse_proxy hearth-1:${port} hearth-2:${port} \\{`));
    assert.match(caddyfile, /health_uri \/_ready/);
    for (const service of Object.values(services))
      for (const volume of (service.volumes ?? []) as string[])
        if (volume.startsWith('./')) assert.ok(existsSync(join(ROOT, volume.split(':')[0] as string)), volume);
    // coturn's user is the one Hearth hands to voice clients.
    assert.ok(services.coturn.command.includes(`--user=${env.HEARTH_VOICE_TURN_USERNAME}:\${TURN_PASSWORD}`));
    assert.equal(env.HEARTH_VOICE_TURN_CREDENTIAL, `\${TURN_PASSWORD:?set TURN_PASSWORD in .env}`);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The image's steps as plain commands: the build stage in a directory of its own, the runtime stage assembled
// from its COPY lines, and two processes started from it with compose's environment.

const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function redisAnswers(): Promise<boolean> {
  const url = new URL(redisUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 6379) });
    const timer = setTimeout(() => finish(false), 2000);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(/^(\+PONG|-NOAUTH)/.test(data.toString())));
    socket.once('error', () => finish(false));
  });
}

const backends = (await postgresAnswers()) && (await redisAnswers());
if (!backends)
  console.error(
    `\n!!! packaging.test.ts: PostgreSQL (${adminUrl}) or Redis (${redisUrl}) does not answer: the two-process\n` +
      '!!! run of the image is SKIPPED. Start both (or set TEST_DATABASE_URL / TEST_REDIS_URL) to run it.\n',
  );

/** Runs a shell command like a RUN line, failing with its output. */
function run(command: string, cwd: string): void {
  const result = spawnSync('sh', ['-c', command], {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(result.status, 0, `${command} failed:\n${result.stdout}\n${result.stderr}`);
}

describe('the image, built and started as plain commands', { timeout: 900_000 }, () => {
  let runtimeDir = '';
  // Its own cleanups, run when the suite ends: servers and stores left open would keep the file alive.
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it('builds like the build stage and assembles the runtime stage from its COPY lines', async () => {
    const work = await mkdtemp(join(tmpdir(), 'hearth-image-'));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const buildDir = join(work, 'build');
    runtimeDir = join(work, 'runtime');
    const ignored = dockerignore(read('.dockerignore'));
    const build = stage('build');
    assert.deepEqual(args(build, 'WORKDIR'), ['/app']);
    for (const instruction of build.instructions) {
      if (instruction.keyword === 'COPY') {
        const parts = instruction.args.split(' ');
        const dest = join(buildDir, parts.at(-1) as string);
        for (const source of parts.slice(0, -1)) {
          assert.ok(existsSync(join(ROOT, source)), `COPY ${source}: in the repository`);
          assert.ok(!ignored(source), `COPY ${source}: not excluded by .dockerignore`);
          const target = (parts.at(-1) as string).endsWith('/') ? join(dest, source) : dest;
          cpSync(join(ROOT, source), target, {
            recursive: true,
            filter: (path) => !ignored(relative(ROOT, path)),
          });
        }
      } else if (instruction.keyword === 'RUN') {
        const command = instruction.args.replace(/^(--mount=\S+\s+)+/, '');
        if (/^npm ci\b/.test(command)) {
          // npm ci without the network: the packages the lockfile names, linked from this checkout's install
          // (its hidden lockfile copied, since npm rewrites it), then the `prepare` script npm ci runs next.
          execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(buildDir, 'node_modules')]);
          rmSync(join(buildDir, 'node_modules/.package-lock.json'));
          cpSync(join(ROOT, 'node_modules/.package-lock.json'), join(buildDir, 'node_modules/.package-lock.json'));
          run('npm run prepare', buildDir);
        } else if (aptPackages(command)) {
          // The base image's system packages: this test installs nothing on its host, which must have the same
          // tools (argon2 was compiled with them when this checkout was installed).
          for (const tool of aptPackages(command) ?? []) run(`command -v ${tool}`, buildDir);
        } else run(command, buildDir);
      } else if (instruction.keyword === 'WORKDIR') mkdirSync(buildDir, { recursive: true });
      else assert.fail(`build stage: ${instruction.keyword} not handled`);
    }
    const runtime = stage(undefined);
    for (const instruction of runtime.instructions) {
      if (instruction.keyword !== 'COPY') continue;
      const parts = instruction.args.replace(/^--from=build /, '').split(' ');
      const dest = parts.at(-1) as string;
      for (const source of parts.slice(0, -1)) {
        const from = join(buildDir, relative('/app', source));
        assert.ok(existsSync(from), `COPY --from=build ${source}: the build produced it`);
        const target = dest.endsWith('/') ? join(runtimeDir, dest, relative('/app', source)) : join(runtimeDir, dest);
        execFileSync('mkdir', ['-p', join(target, '..')]);
        execFileSync('cp', ['-al', from, target]);
      }
    }
    // What the image runs: the compiled server, the web client, the migrations and database template, and the
    // production packages only.
    for (const path of [
      'dist/main.js',
      'dist/cli/hearth.js',
      'dist/pglite-template.tar',
      'dist/platform/db/migrations',
      'web/dist/index.html',
      'node_modules/argon2',
      'node_modules/tsx',
    ])
      assert.ok(existsSync(join(runtimeDir, path)), `${path} in the image`);
    for (const path of ['node_modules/typescript', 'node_modules/vite', 'node_modules/@biomejs/biome', 'src', 'test'])
      assert.ok(!existsSync(join(runtimeDir, path)), `${path} not in the image`);
  });

  it("starts compose's two Hearth processes from it: ready, one database, a message crosses both ways", {
    skip: backends ? false : 'PostgreSQL or Redis does not answer (see the message above)',
  }, async () => {
    assert.ok(runtimeDir, 'the image was assembled');
    const runtime = stage(undefined);
    // Compose's variables, and its service addresses translated to this machine's.
    const s3 = await startTestS3();
    cleanups.push(() => s3.close());
    const bucket = String(hearthEnv('hearth-1').HEARTH_S3_BUCKET);
    await s3.createBucket(bucket);
    const database = await createTestDatabase(adminUrl, 'image');
    cleanups.push(database.drop);
    const databaseUrl = new URL(database.url);
    const secret = () => randomBytes(32).toString('hex');
    const vars: Record<string, string> = {
      HEARTH_DOMAIN: 'chat.example.test',
      HEARTH_PUBLIC_IP: '127.0.0.1',
      POSTGRES_PASSWORD: secret(),
      VALKEY_PASSWORD: secret(),
      HEARTH_S3_ACCESS_KEY_ID: s3.accessKeyId,
      HEARTH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      TURN_PASSWORD: secret(),
      ...Object.fromEntries(SECRETS.map((name) => [name, secret()])),
    };
    const translated = {
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL: redisUrl,
      HEARTH_S3_ENDPOINT: s3.endpoint,
      // Several test runs share this Redis; compose's Valkey is the deployment's own.
      HEARTH_REDIS_PREFIX: `hearth-image-${randomBytes(6).toString('hex')}:`,
    };
    const nodes: { url: string; port: number; spawned: Spawned }[] = [];
    for (const service of ['hearth-1', 'hearth-2']) {
      const port = await freePort();
      const dataDir = await mkdtemp(join(tmpdir(), 'hearth-volume-'));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
      Object.assign(env, stageEnv(runtime));
      for (const [name, value] of Object.entries(hearthEnv(service))) env[name] = interpolate(String(value), vars);
      Object.assign(env, translated, {
        // Each process has its own address here (compose gives each its own network namespace), and no
        // proxy in front: it is reached directly.
        PORT: String(port),
        HOST: '127.0.0.1',
        HEARTH_PUBLIC_URL: `http://127.0.0.1:${port}`,
        HEARTH_DATA_DIR: dataDir,
      });
      const argv = execForm(args(runtime, 'CMD')[0] as string) as string[];
      assert.equal(argv[0], 'node');
      const child = spawn(process.execPath, argv.slice(1), { cwd: runtimeDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        out += d;
      });
      const exited = new Promise<number | string>((resolve) =>
        child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
      );
      cleanups.push(async () => child.kill('SIGKILL'));
      const spawned: Spawned = { child, stdout: () => out, stderr: () => out, exited };
      nodes.push({ url: `http://127.0.0.1:${port}`, port, spawned });
    }
    for (const node of nodes) {
      const deadline = Date.now() + 120_000;
      let ready: Response | undefined;
      while (Date.now() < deadline) {
        assert.equal(node.spawned.child.exitCode, null, `exited early:\n${node.spawned.stdout()}`);
        ready = await fetch(`${node.url}/_ready`).catch(() => undefined);
        if (ready?.status === 200) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(ready?.status, 200, `not ready:\n${node.spawned.stdout()}`);
      assert.deepEqual(await ready?.json(), {
        status: 'ready',
        checks: { database: 'ok', shared_state: 'ok', object_store: 'ok' },
      });
      // The image's HEALTHCHECK command, as Docker runs it inside the container.
      const probe = execForm(/CMD (.*)$/.exec(args(runtime, 'HEALTHCHECK')[0] as string)?.[1] as string) as string[];
      const healthy = spawnSync(process.execPath, probe.slice(1), { env: { PORT: String(node.port) } });
      assert.equal(healthy.status, 0);
    }
    const [one, two] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    // Distinct worker ids leased from the one database.
    assert.match(one.spawned.stdout(), /"storage":"postgres".*"msg":"database ready"/);
    const db = new pg.Client({ connectionString: databaseUrl.toString() });
    await db.connect();
    const leases = await db.query('SELECT worker_id FROM node_leases WHERE expires_at > now() ORDER BY worker_id');
    await db.end();
    assert.deepEqual(
      leases.rows.map((r) => r.worker_id),
      [1, 2],
    );

    const user = await registerUser(one);
    const guild = await request(one, 'POST', '/v1/guilds', { auth: user.token, body: { name: 'image' } });
    assert.equal(guild.status, 200, guild.text);
    const channels = await request(two, 'GET', `/v1/guilds/${guild.body.id}/channels`, { auth: user.token });
    assert.equal(channels.status, 200, channels.text);
    const channelId = channels.body.find((c: { type: number }) => c.type === 0).id as string;
    const gateway = GatewayClient.connect(two);
    cleanups.push(() => gateway.close());
    await gateway.ready(user.token);
    const sent = await request(one, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: user.token,
      body: { content: 'through hearth-1' },
    });
    assert.equal(sent.status, 200, sent.text);
    const event = await gateway.dispatch('MESSAGE_CREATE', 10_000);
    assert.equal(event.d.id, sent.body.id);
    assert.equal(event.d.content, 'through hearth-1');
    const read = await request(two, 'GET', `/v1/channels/${channelId}/messages/${sent.body.id}`, {
      auth: user.token,
    });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.content, 'through hearth-1');

    // docker stop: SIGTERM to the CMD's node, which shuts down and exits 0.
    one.spawned.child.kill('SIGTERM');
    assert.equal(await one.spawned.exited, 0);
    assert.match(one.spawned.stdout(), /"signal":"SIGTERM","msg":"shutting down"/);
    two.spawned.child.kill('SIGTERM');
    assert.equal(await two.spawned.exited, 0);
  });
});
