import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { warnMissingTool } from './missing-tool.ts';
import { type Spawned, spawnProcess } from './spawn.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `CADDY_PATH` when set (and there), else Debian's `caddy` (apt-get install caddy) or whichever is first on PATH. */
export const CADDY_PATH =
  process.env.CADDY_PATH !== undefined
    ? existsSync(process.env.CADDY_PATH)
      ? process.env.CADDY_PATH
      : undefined
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, 'caddy'))
        .find((path) => existsSync(path));

/** Says loudly, once per file, that the tests behind Caddy did not run. */
export function warnNoCaddy(file: string): void {
  warnMissingTool('CADDY', 'reverse-proxy tests', file, "Debian's caddy (apt-get install caddy) or set CADDY_PATH");
}

/**
 * deploy/Caddyfile with the deployment's names replaced by this machine's: the site address becomes plain HTTP
 * on `site` (no certificate), `hearth-1:8080` and `hearth-2:8080` the two processes. Every other directive is the
 * file's own, so a test through it checks the routing a self-hoster gets; a name that is no longer in the file
 * throws, so the test cannot silently stop following it.
 */
export async function deployedCaddyfile(site: string, upstreams: readonly [string, string]): Promise<string> {
  let text = await readFile(join(ROOT, 'deploy/Caddyfile'), 'utf8');
  const replacements: [string, string][] = [
    ['{$HEARTH_DOMAIN}', site],
    ['hearth-1:8080', upstreams[0]],
    ['hearth-2:8080', upstreams[1]],
  ];
  for (const [name, value] of replacements) {
    if (!text.includes(name)) throw new Error(`deploy/Caddyfile no longer mentions ${name}`);
    text = text.replaceAll(name, value);
  }
  // No admin endpoint for a test instance: every Caddy on the machine would want 127.0.0.1:2019.
  return `{\n\tadmin off\n}\n\n${text}`;
}

export interface RunningCaddy {
  spawned: Spawned;
  stop(): Promise<void>;
}

/** `caddy run --config <file> --adapter caddyfile`, its state (HOME, XDG dirs) in a directory of its own. */
export async function startCaddy(caddyfile: string): Promise<RunningCaddy> {
  if (!CADDY_PATH) throw new Error('no caddy binary');
  const dir = await mkdtemp(join(tmpdir(), 'hearth-caddy-'));
  const config = join(dir, 'Caddyfile');
  await writeFile(config, caddyfile);
  const spawned = spawnProcess(CADDY_PATH, ['run', '--config', config, '--adapter', 'caddyfile'], {
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  });
  return {
    spawned,
    async stop() {
      spawned.child.kill('SIGTERM');
      const killer = setTimeout(() => spawned.child.kill('SIGKILL'), 3000);
      await spawned.exited;
      clearTimeout(killer);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
