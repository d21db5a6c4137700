import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type ParsedCredential, parseAuthorization } from '../../src/http/auth/authorization.ts';

const OUTSIDE = { adminArea: false };
const INSIDE = { adminArea: true };
const SESSION = `flx_${'aB3'.repeat(12)}`;

/** docs/conventions.md#the-authorization-header, case by case. */
const CASES: [string | undefined, ParsedCredential, ParsedCredential?][] = [
  // [header, outside /v1/admin, inside /v1/admin (when different)]
  [undefined, { kind: 'none' }],
  ['', { kind: 'invalid' }],
  [' ', { kind: 'invalid' }],
  [SESSION, { kind: 'session', token: SESSION }],
  ['any-bare-token', { kind: 'session', token: 'any-bare-token' }],
  [`Bearer ${SESSION}`, { kind: 'session', token: SESSION }],
  [`Bearer ${SESSION}x`, { kind: 'bearer', token: `${SESSION}x` }],
  [`Bearer ${SESSION.slice(0, -1)}`, { kind: 'bearer', token: SESSION.slice(0, -1) }],
  [`Bearer flx_${'a'.repeat(35)}-`, { kind: 'bearer', token: `flx_${'a'.repeat(35)}-` }],
  ['Bearer abcDEF123-_', { kind: 'bearer', token: 'abcDEF123-_' }],
  ['Bot 123.abc-_XYZ', { kind: 'bot', token: '123.abc-_XYZ', applicationId: '123' }],
  ['Bot 9223372036854775807.s', { kind: 'bot', token: '9223372036854775807.s', applicationId: '9223372036854775807' }],
  // An application id past 2^63−1 names nothing: malformed, never sent to SQL.
  ['Bot 9223372036854775808.s', { kind: 'invalid' }],
  [`Bot ${'9'.repeat(20)}.s`, { kind: 'invalid' }],
  [`Bot ${'9'.repeat(21)}.s`, { kind: 'invalid' }],
  ['Bot 123.', { kind: 'invalid' }],
  ['Bot .abc', { kind: 'invalid' }],
  ['Bot abc', { kind: 'invalid' }],
  ['Bot 12.ab.cd', { kind: 'invalid' }],
  ['Bot', { kind: 'session', token: 'Bot' }],
  ['Bearer', { kind: 'session', token: 'Bearer' }],
  ['Admin fa_1_x', { kind: 'none' }, { kind: 'admin', token: 'fa_1_x' }],
  [`Admin ${SESSION}`, { kind: 'none' }, { kind: 'admin', token: SESSION }],
  ['admin fa_1_x', { kind: 'invalid' }],
  ['bearer x', { kind: 'invalid' }],
  ['BEARER x', { kind: 'invalid' }],
  ['bot 1.x', { kind: 'invalid' }],
  ['BOT 1.x', { kind: 'invalid' }],
  ['Basic dXNlcjpwYXNz', { kind: 'invalid' }],
  ['Bearer  x', { kind: 'invalid' }],
  ['Bot  1.x', { kind: 'invalid' }],
  ['Admin  fa_1_x', { kind: 'invalid' }],
  ['Bearer x ', { kind: 'invalid' }],
  [` ${SESSION}`, { kind: 'invalid' }],
  [`${SESSION} `, { kind: 'invalid' }],
  [`\t${SESSION}`, { kind: 'invalid' }],
  [`\u00a0${SESSION}`, { kind: 'invalid' }],
  [`Bearer ${SESSION}\u00a0`, { kind: 'invalid' }],
  ['Bearer\tx', { kind: 'invalid' }],
  ['Bearer x y', { kind: 'invalid' }],
  ['tök', { kind: 'invalid' }],
  ['Bearer tök', { kind: 'invalid' }],
];

describe('parseAuthorization: table', () => {
  for (const [header, outside, inside] of CASES) {
    it(`${JSON.stringify(header)} → ${outside.kind}${inside ? ` (admin area: ${inside.kind})` : ''}`, () => {
      assert.deepEqual(parseAuthorization(header, OUTSIDE), outside);
      assert.deepEqual(parseAuthorization(header, INSIDE), inside ?? outside);
    });
  }
});

const printable = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const tokenText = fc.string({ unit: printable, minLength: 1, maxLength: 80 });
const anyText = fc.string({ unit: 'binary', maxLength: 120 });
const base62 = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789');
const WHITESPACE = [' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff'];

describe('parseAuthorization: properties', () => {
  it('never throws and always returns one of the six kinds', () => {
    fc.assert(
      fc.property(anyText, fc.boolean(), (header, adminArea) => {
        const parsed = parseAuthorization(header, { adminArea });
        assert.ok(['none', 'invalid', 'session', 'bot', 'bearer', 'admin'].includes(parsed.kind));
      }),
      { numRuns: 5000 },
    );
  });

  it('only an absent header, or Admin outside /v1/admin, is "none"', () => {
    fc.assert(
      fc.property(anyText, fc.boolean(), (header, adminArea) => {
        const parsed = parseAuthorization(header, { adminArea });
        if (parsed.kind === 'none') assert.ok(!adminArea && header.startsWith('Admin '));
      }),
      { numRuns: 3000 },
    );
  });

  it('a token it accepts is never empty and never carries whitespace, and is a suffix of the header', () => {
    fc.assert(
      fc.property(anyText, fc.boolean(), (header, adminArea) => {
        const parsed = parseAuthorization(header, { adminArea });
        if ('token' in parsed) {
          assert.ok(parsed.token.length > 0);
          assert.ok(/^[!-~]+$/.test(parsed.token));
          assert.ok(header.endsWith(parsed.token));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('surrounding whitespace of any kind makes any header invalid', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          tokenText,
          tokenText.map((t) => `Bearer ${t}`),
          tokenText.map((t) => `Bot ${t}`),
        ),
        fc.constantFrom(...WHITESPACE),
        fc.boolean(),
        fc.boolean(),
        (header, space, before, adminArea) => {
          const padded = before ? space + header : header + space;
          assert.deepEqual(parseAuthorization(padded, { adminArea }), { kind: 'invalid' });
        },
      ),
    );
  });

  it('flx_ + 36 alphanumerics names a session bare or under Bearer; any other Bearer token is OAuth2', () => {
    fc.assert(
      fc.property(fc.string({ unit: base62, minLength: 36, maxLength: 36 }), (body) => {
        const token = `flx_${body}`;
        assert.deepEqual(parseAuthorization(`Bearer ${token}`, OUTSIDE), { kind: 'session', token });
        assert.deepEqual(parseAuthorization(token, OUTSIDE), { kind: 'session', token });
      }),
    );
    fc.assert(
      fc.property(tokenText, (token) => {
        const parsed = parseAuthorization(`Bearer ${token}`, OUTSIDE);
        const isSession = /^flx_[A-Za-z0-9]{36}$/.test(token);
        assert.deepEqual(parsed, isSession ? { kind: 'session', token } : { kind: 'bearer', token });
      }),
    );
  });

  it('schemes are case-sensitive: any other casing of Bot, Bearer or Admin is invalid', () => {
    const casing = (word: string) =>
      fc
        .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
        .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''))
        .filter((w) => w !== word);
    fc.assert(
      fc.property(
        fc.oneof(casing('Bot'), casing('Bearer'), casing('Admin')),
        tokenText,
        fc.boolean(),
        (scheme, token, adminArea) => {
          assert.deepEqual(parseAuthorization(`${scheme} ${token}`, { adminArea }), { kind: 'invalid' });
        },
      ),
    );
  });

  it('Bot tokens past 2^63−1 are malformed', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n << 63n, max: 10n ** 20n - 1n }), (id) => {
        assert.deepEqual(parseAuthorization(`Bot ${id}.secret`, OUTSIDE), { kind: 'invalid' });
      }),
    );
  });

  it('Bot tokens carry the application id before the dot', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
        (id, secret) => {
          const token = `${id}.${secret}`;
          assert.deepEqual(parseAuthorization(`Bot ${token}`, OUTSIDE), {
            kind: 'bot',
            token,
            applicationId: String(id),
          });
        },
      ),
    );
  });

  it('an Admin header is read only in the admin area, and ignored elsewhere', () => {
    fc.assert(
      fc.property(tokenText, (token) => {
        assert.deepEqual(parseAuthorization(`Admin ${token}`, OUTSIDE), { kind: 'none' });
        assert.deepEqual(parseAuthorization(`Admin ${token}`, INSIDE), { kind: 'admin', token });
      }),
    );
  });
});
