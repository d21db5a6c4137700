import { availableParallelism } from 'node:os';
import argon2 from 'argon2';

/** argon2id at OWASP's minimum (19 MiB, t=2, p=1); the native binding runs on libuv's pool, off the event loop. */
export const PASSWORD_HASH_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const;

/**
 * argon2id at its floor (1 MiB, t=1): what the in-process test servers hash with (test/support/server.ts), where
 * a suite registers thousands of accounts and 19 MiB × 2 passes cost about 30 ms of CPU each. A hash carries its
 * own parameters, so verifying works either way; a server started as a process always uses the options above.
 */
export const TEST_PASSWORD_HASH_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 1024,
  timeCost: 1,
  parallelism: 1,
} as const;

let hashOptions: typeof PASSWORD_HASH_OPTIONS | typeof TEST_PASSWORD_HASH_OPTIONS = PASSWORD_HASH_OPTIONS;

/** Hashes new passwords with TEST_PASSWORD_HASH_OPTIONS in this process from now on (test servers only). */
export function hashPasswordsCheaplyForTests(): void {
  hashOptions = TEST_PASSWORD_HASH_OPTIONS;
}

/**
 * Hashes in flight at once: one per core, minus one core left to the event loop, so that a burst of logins
 * (or a password-guessing flood) cannot starve every other request of CPU. Further hashes queue here.
 */
export const PASSWORD_HASH_CONCURRENCY = Math.max(1, availableParallelism() - 1);

let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= PASSWORD_HASH_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    // Hand the slot straight to the next waiter, so `running` never dips while work is queued.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** Hashes running and waiting for a slot (the `hearth_argon2_hashes` metric). */
export function passwordHashQueue(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}

export function hashPassword(password: string): Promise<string> {
  return limited(() => argon2.hash(password, hashOptions));
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await limited(() => argon2.verify(hash, password));
  } catch {
    return false;
  }
}

let decoyHash: Promise<string> | undefined;

/**
 * Verifies against a fixed decoy hash so that an unknown email costs the same as a wrong password.
 */
export async function burnPasswordVerify(password: string): Promise<false> {
  decoyHash ??= hashPassword('decoy-password-never-matches');
  await verifyPassword(await decoyHash, password);
  return false;
}
