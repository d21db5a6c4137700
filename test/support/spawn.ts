import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A port that was free a moment ago (the entrypoint has no way to report a port chosen with PORT=0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

/**
 * Runs the real entrypoint (`node --import tsx src/main.ts`). The environment starts clean of the test
 * backends, so the process uses exactly what `env` says.
 */
export function spawnEntrypoint(env: Record<string, string>, args: string[] = []): Spawned {
  return spawnProcess(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], env);
}

/** Runs `command` in the repository with PATH, HOME, TMPDIR, LANG and NODE_OPTIONS plus `env`, its output kept. */
export function spawnProcess(command: string, args: string[], env: Record<string, string>): Spawned {
  const base: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_OPTIONS']) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Polls `/_health` until the server answers or the process dies. */
export async function waitForHealth(url: string, spawned: Spawned, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void spawned.exited.then(() => {
    dead = true;
  });
  while (Date.now() < deadline) {
    if (dead) throw new Error(`server exited early:\n${spawned.stderr()}\n${spawned.stdout().slice(-2000)}`);
    try {
      const res = await fetch(`${url}/_health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  spawned.child.kill('SIGKILL');
  throw new Error(`server did not become healthy in ${timeoutMs} ms:\n${spawned.stderr()}`);
}

/** A spawned process's resident memory in bytes (VmRSS from /proc). */
export async function residentBytes(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kib) throw new Error(`VmRSS of ${pid} not readable`);
  return Number(kib) * 1024;
}

/**
 * Runs `work` while sampling a process's resident memory every 25 ms; resolves with its result and the
 * growth of the peak over the memory before.
 */
export async function peakGrowth<T>(
  pid: number | undefined,
  work: () => Promise<T>,
): Promise<{ result: T; growth: number; baseline: number }> {
  const baseline = await residentBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    residentBytes(pid).then(
      (value) => {
        peak = Math.max(peak, value);
      },
      () => {},
    );
  }, 25);
  try {
    const result = await work();
    peak = Math.max(peak, await residentBytes(pid));
    return { result, growth: peak - baseline, baseline };
  } finally {
    clearInterval(sampler);
  }
}
