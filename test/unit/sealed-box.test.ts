import assert from 'node:assert/strict';
import { createCipheriv, hkdfSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { deriveKey, openUnder, openWithKey, sealUnder, sealWithKey } from '../../src/platform/crypto/sealed-box.ts';
import { hmacSha256 } from '../../src/platform/crypto/tokens.ts';

const SECRET = 'a-server-secret-of-some-length-0123456789';

describe('deriveKey', () => {
  it('is HKDF-SHA256 (empty salt) of the secret, 32 bytes, distinct per info label', () => {
    const key = deriveKey(SECRET, 'purpose one');
    assert.equal(key.length, 32);
    assert.deepEqual(key, Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), 'purpose one', 32)));
    assert.deepEqual(deriveKey(SECRET, 'purpose one'), key);
    assert.notDeepEqual(deriveKey(SECRET, 'purpose two'), key);
    assert.notDeepEqual(deriveKey(`${SECRET}x`, 'purpose one'), key);
  });
});

describe('sealWithKey / openWithKey', () => {
  const key = deriveKey(SECRET, 'test');

  it('round-trips, with a fresh IV each time, and the plaintext does not show', () => {
    const a = sealWithKey(key, 'JBSWY3DPEHPK3PXP', 'row:1');
    const b = sealWithKey(key, 'JBSWY3DPEHPK3PXP', 'row:1');
    assert.notEqual(a, b);
    assert.match(a, /^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    assert.ok(!a.includes('JBSWY3DPEHPK3PXP'));
    assert.equal(openWithKey(key, a, 'row:1'), 'JBSWY3DPEHPK3PXP');
    assert.equal(openWithKey(key, b, 'row:1'), 'JBSWY3DPEHPK3PXP');
  });

  it('fails closed on a wrong key, a wrong context, tampering and malformed input', () => {
    const sealed = sealWithKey(key, 'secret text', 'row:1');
    assert.equal(openWithKey(deriveKey(SECRET, 'other'), sealed, 'row:1'), undefined);
    assert.equal(openWithKey(key, sealed, 'row:2'), undefined);
    assert.equal(openWithKey(key, sealed), undefined);
    const [iv, tag, body] = sealed.split('.') as [string, string, string];
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    assert.equal(openWithKey(key, [iv, tag, flipped.toString('base64url')].join('.'), 'row:1'), undefined);
    const badTag = Buffer.from(tag, 'base64url');
    badTag[15] = (badTag[15] ?? 0) ^ 0x80;
    assert.equal(openWithKey(key, [iv, badTag.toString('base64url'), body].join('.'), 'row:1'), undefined);
    for (const junk of ['', '.', '..', 'a.b.c', `${iv}.${tag}`, `${sealed}.x`, 'JBSWY3DPEHPK3PXP'])
      assert.equal(openWithKey(key, junk, 'row:1'), undefined, junk);
  });
});

describe('sealUnder / openUnder', () => {
  it('keys with HMAC-SHA256(secret, label), so values sealed by the older helper still open', () => {
    // What the former account-lifecycle helper wrote: AES-256-GCM under HMAC(secret, label), no AAD.
    const iv = Buffer.alloc(12, 7);
    const cipher = createCipheriv('aes-256-gcm', hmacSha256('ticket', 'label'), iv);
    const body = Buffer.concat([cipher.update('session-token', 'utf8'), cipher.final()]);
    const legacy = [iv, cipher.getAuthTag(), body].map((p) => p.toString('base64url')).join('.');
    assert.equal(openUnder('ticket', 'label', legacy), 'session-token');
    assert.equal(openUnder('ticket', 'label', sealUnder('ticket', 'label', 'x')), 'x');
    assert.equal(openUnder('other', 'label', legacy), undefined);
  });
});
