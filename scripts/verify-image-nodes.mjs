#!/usr/bin/env node
// Two containers of Hearth's image on one PostgreSQL and one Redis, set up as docs/deployment.md's "Several
// processes" says (the same database, Redis, secrets and shared uploads; worker ids 1 and 2 asked for): both
// become healthy and ready, mint ids with distinct worker ids, carry a message from each one's API to a gateway client
// of the other, serve through one an attachment uploaded through the other, and stop with exit code 0.
// scripts/verify-image.sh runs it when DATABASE_URL and REDIS_URL are set; a manual check, not in CI.
//
// Environment: IMAGE (default hearth), DOCKER (default docker), DATABASE_URL (an empty database of its own)
// and REDIS_URL, both reachable from this host's loopback (the containers use the host's network); PORT (the
// first container's, default 18090; the second takes the next). Uploads go to HEARTH_S3_BUCKET with the other
// HEARTH_S3_* settings when given, otherwise to a directory both containers mount (HEARTH_SHARED_OBJECT_DIR).
// Node 20 runs the gateway client with --experimental-websocket (scripts/verify-image.sh passes it).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const image = process.env.IMAGE ?? 'hearth';
const dockerClient = process.env.DOCKER ?? 'docker';
const firstPort = Number(process.env.PORT ?? 18090);
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
if (!databaseUrl || !redisUrl) {
  console.error('verify-image-nodes: set DATABASE_URL (an empty database) and REDIS_URL');
  process.exit(2);
}
if (typeof WebSocket === 'undefined') {
  console.error('verify-image-nodes: no WebSocket in this node: run it with --experimental-websocket');
  process.exit(2);
}

const docker = (...args) => execFileSync(dockerClient, args, { encoding: 'utf8' }).trim();
/** A container's output, stdout and stderr together (docker logs keeps them apart). */
const logs = (name) => {
  const result = spawnSync(dockerClient, ['logs', name], { encoding: 'utf8' });
  return result.stdout + result.stderr;
};
const secret = () => randomBytes(32).toString('hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let failures = 0;
function check(description, ok) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${description}`);
  if (!ok) failures += 1;
}

const run = randomBytes(4).toString('hex');
const shared = {
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  // Both containers' keys apart from anything else on this Redis.
  HEARTH_REDIS_PREFIX: `hearth-verify-${run}:`,
  HEARTH_SUDO_SECRET: secret(),
  HEARTH_MEDIA_PROXY_SECRET: secret(),
  HEARTH_RELAY_SECRET: secret(),
  HEARTH_MFA_SECRET: secret(),
  HEARTH_ROLES: 'api,gateway,media',
  HOST: '127.0.0.1',
};
const mounts = [];
let objectsDir;
if (process.env.HEARTH_S3_BUCKET) {
  for (const [name, value] of Object.entries(process.env)) if (name.startsWith('HEARTH_S3_')) shared[name] = value;
} else {
  // One directory for both, writable by the image's user (uid 10001).
  objectsDir = mkdtempSync(join(tmpdir(), 'hearth-verify-objects-'));
  chownSync(objectsDir, 10001, 10001);
  shared.HEARTH_SHARED_OBJECT_DIR = 'true';
  mounts.push('-v', `${objectsDir}:/data/objects`);
}

const nodes = [1, 2].map((worker) => {
  const port = firstPort + worker - 1;
  return { name: `hearth-verify-${run}-${worker}`, worker, port, url: `http://127.0.0.1:${port}` };
});

async function api(node, method, path, token, body) {
  const response = await fetch(`${node.url}/v1${path}`, {
    method,
    headers: { authorization: token ?? '', ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

/** A gateway client on `node`, identified with `token`: resolves the next MESSAGE_CREATE's data. */
async function gatewayClient(node, token) {
  const socket = new WebSocket(`ws://127.0.0.1:${node.port}/gateway?v=1&encoding=json`);
  const frames = [];
  let wake = () => {};
  socket.addEventListener('message', (event) => {
    frames.push(JSON.parse(String(event.data)));
    wake();
  });
  async function next(match, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = frames.findIndex(match);
      if (index >= 0) return frames.splice(index, 1)[0];
      if (Date.now() > deadline) throw new Error('timed out waiting for a gateway frame');
      await Promise.race([new Promise((resolve) => (wake = resolve)), sleep(100)]);
    }
  }
  await next((f) => f.op === 10, 5000);
  socket.send(
    JSON.stringify({ op: 2, d: { token, properties: { os: 'linux', browser: 'verify', device: 'verify' } } }),
  );
  await next((f) => f.op === 0 && f.t === 'READY', 5000);
  return {
    messageCreate: async () => (await next((f) => f.op === 0 && f.t === 'MESSAGE_CREATE', 10_000)).d,
    close: () => socket.close(),
  };
}

try {
  for (const node of nodes) {
    const env = {
      ...shared,
      PORT: String(node.port),
      HEARTH_WORKER_ID: String(node.worker),
      HEARTH_PUBLIC_URL: node.url,
    };
    docker(
      'run',
      '-d',
      '--name',
      node.name,
      '--network',
      'host',
      '-v',
      `${node.name}-data:/data`,
      ...mounts,
      ...Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`]),
      image,
    );
  }
  for (const node of nodes) {
    let health = 'starting';
    for (let i = 0; i < 240 && health === 'starting'; i++) {
      await sleep(500);
      health = docker('inspect', '--format', '{{.State.Health.Status}}', node.name);
    }
    check(`${node.name} is healthy`, health === 'healthy');
    if (health !== 'healthy') throw new Error(logs(node.name));
    const ready = await fetch(`${node.url}/_ready`);
    const readiness = await ready.text();
    check(
      `${node.name} is ready (database, shared state, object store)`,
      ready.status === 200 && readiness.includes('"status":"ready"') && !readiness.includes('failed'),
    );
  }
  const startLogs = nodes.map((node) => logs(node.name));
  check(
    'both use PostgreSQL',
    startLogs.every((log) => /"storage":"postgres".*"msg":"database ready"/.test(log)),
  );

  const [one, two] = nodes;
  const email = `verify-${run}@example.com`;
  const registered = await api(one, 'POST', '/auth/register', undefined, {
    email,
    password: `verify-${run}-${secret().slice(0, 12)}`,
    username: `verify${run}`,
  });
  check('a person registers through the first', registered.status === 200);
  const { token } = registered.body;
  const guild = await api(one, 'POST', '/guilds', token, { name: 'Two containers' });
  const channel = guild.body.system_channel_id;
  for (const [from, to] of [
    [one, two],
    [two, one],
  ]) {
    const gateway = await gatewayClient(to, token);
    const content = `sent through ${from.name}`;
    const sent = await api(from, 'POST', `/channels/${channel}/messages`, token, { content });
    const received = await gateway.messageCreate().catch(() => undefined);
    gateway.close();
    check(
      `a message sent through ${from.name} reaches a gateway client of ${to.name}`,
      sent.status === 200 && received?.id === sent.body.id && received?.content === content,
    );
    // Bits 21–12 of a snowflake are the worker id that minted it: the one this container leased.
    const worker = sent.status === 200 ? Number((BigInt(sent.body.id) >> 12n) & 0x3ffn) : undefined;
    check(`${from.name} mints ids with worker id ${from.worker}`, worker === from.worker);
  }
  const form = new FormData();
  form.append('payload_json', JSON.stringify({ attachments: [{ id: 0, filename: 'note.txt' }] }));
  form.append('files[0]', new Blob(['uploaded through the first']), 'note.txt');
  const upload = await fetch(`${one.url}/v1/channels/${channel}/messages`, {
    method: 'POST',
    headers: { authorization: token },
    body: form,
  });
  const attachment = new URL((await upload.json()).attachments?.[0]?.url ?? '/', one.url);
  const served = await fetch(`${two.url}${attachment.pathname}${attachment.search}`);
  check(
    'an attachment uploaded through the first is served by the second',
    upload.status === 200 && served.status === 200 && (await served.text()) === 'uploaded through the first',
  );

  for (const node of nodes) {
    docker('stop', node.name);
    const exitCode = docker('inspect', '--format', '{{.State.ExitCode}}', node.name);
    const shutdown = /"signal":"SIGTERM","msg":"shutting down"/.test(logs(node.name));
    check(`${node.name} stops on SIGTERM with exit code 0`, exitCode === '0' && shutdown);
  }
} catch (error) {
  check(`the run went through (${error instanceof Error ? error.message : error})`, false);
} finally {
  for (const node of nodes) {
    try {
      docker('rm', '-f', node.name);
      docker('volume', 'rm', `${node.name}-data`);
    } catch {}
  }
  if (objectsDir) rmSync(objectsDir, { recursive: true, force: true });
}
console.log(failures === 0 ? 'two containers: all checks passed' : `two containers: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
