import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import argon2 from 'argon2';
import {
  hashPassword,
  hashPasswordsCheaplyForTests,
  PASSWORD_HASH_OPTIONS,
  verifyPassword,
} from '../../src/platform/crypto/passwords.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The parameters a PHC-format argon2 hash carries: `$argon2id$v=19$m=…,p=…,t=…$salt$hash`. */
const parameters = (hash: string) => hash.split('$').slice(1, 4).join('$');

describe('password hashes', () => {
  it('are argon2id at 19 MiB, t=2, p=1 in a process that did not ask for test hashing', () => {
    // A process of its own: the test servers of other files in this process may have switched it already.
    const script =
      "import { hashPassword, verifyPassword } from './src/platform/crypto/passwords.ts';" +
      "const hash = await hashPassword('correct horse');" +
      "console.log(JSON.stringify({ hash, ok: await verifyPassword(hash, 'correct horse') }));";
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const { hash, ok } = JSON.parse(out) as { hash: string; ok: boolean };
    assert.equal(parameters(hash), 'argon2id$v=19$m=19456,p=1,t=2');
    assert.equal(ok, true);
  });

  it('are argon2id at its floor once test hashing is on, and hashes of either kind still verify', async () => {
    const strong = await argon2.hash('correct horse', PASSWORD_HASH_OPTIONS);
    hashPasswordsCheaplyForTests();
    const cheap = await hashPassword('correct horse');
    assert.equal(parameters(cheap), 'argon2id$v=19$m=1024,p=1,t=1');
    assert.equal(await verifyPassword(cheap, 'correct horse'), true);
    assert.equal(await verifyPassword(cheap, 'wrong horse'), false);
    assert.equal(await verifyPassword(strong, 'correct horse'), true);
    assert.equal(await verifyPassword(strong, 'wrong horse'), false);
  });
});
