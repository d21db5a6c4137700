import { readFileSync } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Who holds an embedded data directory: written into its lock file. */
interface LockOwner {
  pid: number;
  boot_id: string;
  started_at: string;
}

/** Locks this process holds: a lock file naming our own pid is otherwise taken for a stale one (a reused pid). */
const heldHere = new Map<string, LockOwner>();

export class DataDirectoryInUseError extends Error {
  constructor(
    readonly lockPath: string,
    readonly owner: LockOwner,
  ) {
    super(
      `the data directory is in use by process ${owner.pid} (since ${owner.started_at}): stop that process first ` +
        `(two processes on one embedded database lose writes); if it is gone, remove ${lockPath}`,
    );
  }
}

/**
 * Takes the embedded database's data directory for this process alone, with a lock file created exclusively
 * (`O_EXCL`). PGlite has no lock of its own, and two processes writing one directory lose acknowledged writes
 * and corrupt indexes. A lock left by a process that is gone (killed, or from before a reboot) is taken over.
 * Returns the release function.
 */
export async function lockDataDirectory(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, 'pglite.lock');
  const held = heldHere.get(lockPath);
  if (held) throw new DataDirectoryInUseError(lockPath, held);
  const me: LockOwner = { pid: process.pid, boot_id: bootId(), started_at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(`${JSON.stringify(me)}\n`);
      await handle.sync();
      await handle.close();
      heldHere.set(lockPath, me);
      return async () => {
        heldHere.delete(lockPath);
        // Only our own lock is removed: a takeover by another process (ours was judged stale) stays.
        if ((await readOwner(lockPath))?.pid === me.pid) await unlink(lockPath).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readOwner(lockPath);
    if (owner && isAlive(owner)) throw new DataDirectoryInUseError(lockPath, owner);
    await unlink(lockPath).catch(() => {});
  }
  const owner = await readOwner(lockPath);
  throw new DataDirectoryInUseError(lockPath, owner ?? { pid: 0, boot_id: '', started_at: 'unknown' });
}

async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(lockPath, 'utf8')) as Partial<LockOwner>;
    if (typeof parsed.pid !== 'number') return undefined;
    return { pid: parsed.pid, boot_id: String(parsed.boot_id ?? ''), started_at: String(parsed.started_at ?? '') };
  } catch {
    // Unreadable or half-written (the writer died between create and write): treated as stale.
    return undefined;
  }
}

/**
 * A lock is live when its process runs now, on this boot, and is not this process: a lock naming our pid that
 * we do not hold (`heldHere`) was left by an earlier process whose pid was reused (a restarted container).
 */
function isAlive(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return false;
  const currentBoot = bootId();
  if (owner.boot_id && currentBoot && owner.boot_id !== currentBoot) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}
