import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/platform/log.ts';

function capture(format: 'json' | 'pretty' = 'json', level: 'debug' | 'info' = 'info') {
  const lines: string[] = [];
  const log = createLogger(level, { format, write: (line) => lines.push(line) });
  return { log, lines };
}

describe('logger (docs/deployment.md#logs)', () => {
  it('writes one JSON object per line with the time, level, message and fields', () => {
    const { log, lines } = capture();
    log.info('request', { request_id: 'r1', method: 'GET', route: '/v1/users/@me', status: 200 });
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.endsWith('}\n'));
    assert.equal(lines[0]!.trim().split('\n').length, 1);
    const entry = JSON.parse(lines[0]!);
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(
      { ...entry, time: undefined },
      {
        time: undefined,
        level: 'info',
        msg: 'request',
        request_id: 'r1',
        method: 'GET',
        route: '/v1/users/@me',
        status: 200,
      },
    );
  });

  it('redacts credential fields at the top level and one level down', () => {
    const { log, lines } = capture();
    log.warn('sso provider request failed', {
      authorization: 'Bearer hunter2-token',
      password: 'correct horse',
      token: 'tok-secret',
      code: 'oauth-code-123',
      client_secret: 'cs-123',
      headers: { authorization: 'Bearer nested', cookie: 'session=abc', accept: 'application/json' },
      body: { refresh_token: 'rt-1', id_token: 'it-1', secret: 's-1' },
      step: 'token',
    });
    const text = lines.join('');
    for (const value of [
      'hunter2',
      'correct horse',
      'tok-secret',
      'oauth-code-123',
      'cs-123',
      'nested',
      'session=abc',
      'rt-1',
      'it-1',
      's-1',
    ])
      assert.ok(!text.includes(value), `${value} leaked: ${text}`);
    const entry = JSON.parse(lines[0]!);
    assert.equal(entry.authorization, '[redacted]');
    assert.equal(entry.headers.cookie, '[redacted]');
    assert.equal(entry.headers.accept, 'application/json');
    assert.equal(entry.body.secret, '[redacted]');
    assert.equal(entry.step, 'token');
  });

  it('drops events under the level and logs nothing when silent', () => {
    const { log, lines } = capture();
    log.debug('noise');
    log.info('kept');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).msg),
      ['kept'],
    );
    const silent: string[] = [];
    createLogger('silent', { write: (line) => silent.push(line) }).error('hidden');
    assert.deepEqual(silent, []);
  });

  it('writes one human line per event in the pretty format, redacted too', () => {
    const { log, lines } = capture('pretty', 'debug');
    log.info('request', { method: 'GET', status: 200, password: 'pw-1', reason: 'two words' });
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request method=GET status=200 password=\[redacted\] reason="two words"\n$/,
    );
  });
});
