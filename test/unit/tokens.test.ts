import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenCheck } from '../../src/platform/crypto/token-check.ts';
import { constantTimeEqual, digest, randomBase62, SESSION_TOKEN_PATTERN } from '../../src/platform/crypto/tokens.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

describe('randomBase62', () => {
  it('returns exactly the requested length from the base62 alphabet', () => {
    for (const length of [0, 1, 7, 36, 64, 500]) {
      const text = randomBase62(length);
      assert.equal(text.length, length);
      assert.match(text, /^[A-Za-z0-9]*$/);
    }
  });

  it('is roughly uniform over the alphabet (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const sample = randomBase62(62 * 4000);
    for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
    assert.equal(counts.size, 62);
    // Chi-square with 61 degrees of freedom: p = 0.0001 at about 112. A byte % 62 without rejection would
    // make the first 8 characters ~25% likelier and push it into the thousands.
    const expected = sample.length / 62;
    let chi = 0;
    for (const c of ALPHABET) chi += ((counts.get(c) ?? 0) - expected) ** 2 / expected;
    assert.ok(chi < 112, `chi-square ${chi.toFixed(1)}`);
  });

  it('does not repeat', () => {
    const seen = new Set(Array.from({ length: 10_000 }, () => randomBase62(20)));
    assert.equal(seen.size, 10_000);
  });
});

const tokenCheck = new TokenCheck('unit-test-secret-'.repeat(3));
const newSessionToken = () => tokenCheck.newSessionToken();

describe('session tokens', () => {
  it('are flx_ + 36 base62 characters', () => {
    for (let i = 0; i < 100; i++) assert.match(newSessionToken(), SESSION_TOKEN_PATTERN);
    assert.ok(SESSION_TOKEN_PATTERN.test(`flx_${'a'.repeat(36)}`));
    assert.ok(!SESSION_TOKEN_PATTERN.test(`flx_${'a'.repeat(35)}`));
    assert.ok(!SESSION_TOKEN_PATTERN.test(`flx_${'a'.repeat(37)}`));
    assert.ok(!SESSION_TOKEN_PATTERN.test(`flx_${'a'.repeat(35)}-`));
  });

  it('carry a keyed check part: a changed character or another key fails it', () => {
    const token = newSessionToken();
    assert.equal(tokenCheck.sessionChecks(token), true);
    const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    assert.equal(tokenCheck.sessionChecks(flipped), false);
    assert.equal(new TokenCheck('another-secret-'.repeat(3)).sessionChecks(token), false);
    assert.equal(tokenCheck.sessionChecks(`flx_${'U'.repeat(36)}`), false);
  });

  it('bot tokens keep <application id>.<43 characters> and check against their application', () => {
    const token = tokenCheck.newBotToken('123456789012345678');
    assert.match(token, /^123456789012345678\.[A-Za-z0-9_-]{43}$/);
    assert.equal(tokenCheck.botChecks(token, '123456789012345678'), true);
    const moved = token.replace('123456789012345678', '123456789012345679');
    assert.equal(tokenCheck.botChecks(moved, '123456789012345679'), false);
    assert.equal(tokenCheck.botChecks(`1.${'A'.repeat(43)}`, '1'), false);
  });

  it('are stored as unpadded base64url SHA-256', () => {
    assert.equal(digest('abc'), 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    assert.match(digest(newSessionToken()), /^[A-Za-z0-9_-]{43}$/);
  });
});

describe('constantTimeEqual', () => {
  it('compares strings and buffers', () => {
    assert.equal(constantTimeEqual('secret', 'secret'), true);
    assert.equal(constantTimeEqual('secret', 'secreT'), false);
    assert.equal(constantTimeEqual(Buffer.from('abc'), Buffer.from('abc')), true);
    assert.equal(constantTimeEqual(Buffer.from('abc'), 'abc'), true);
    assert.equal(constantTimeEqual('', ''), true);
  });

  it('returns false on a length mismatch instead of throwing', () => {
    assert.equal(constantTimeEqual('short', 'much longer'), false);
    assert.equal(constantTimeEqual('', 'x'), false);
    assert.equal(constantTimeEqual(Buffer.alloc(0), Buffer.alloc(32)), false);
    // Same number of characters, different number of UTF-8 bytes.
    assert.equal(constantTimeEqual('é', 'e'), false);
  });
});
