import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

// The server's flags (`loadConfig`'s argv, read with node:util parseArgs): `--flag value`, `--flag=value` and a
// bare `--flag` (= "true"); a flag wins over the environment; the messages name the argument.
function outcome(argv: string[]): Record<string, unknown> | string {
  try {
    const config = loadConfig({}, argv);
    return { port: config.port, host: config.host, testMode: config.testMode, testToken: config.testToken };
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error.message;
  }
}

it('reads --flag value, --flag=value and a bare --flag', () => {
  assert.deepEqual(outcome(['--port', '81', '--host=::1', '--test-mode', '--test-token', 't']), {
    port: 81,
    host: '::1',
    testMode: true,
    testToken: 't',
  });
  // A bare flag followed by another flag; `=` keeps everything after the first one, an empty value included.
  assert.deepEqual(outcome(['--test-mode', '--test-token=a=b', '--host=']), {
    port: 8080,
    host: '',
    testMode: true,
    testToken: 'a=b',
  });
  // A value may start with one dash; only `--` makes the next argument a flag.
  assert.deepEqual(outcome(['--host', '-x', '--test-mode=1', '--test-token', '-abc']), {
    port: 8080,
    host: '-x',
    testMode: true,
    testToken: '-abc',
  });
  // The last occurrence wins.
  assert.equal((outcome(['--port', '81', '--port=82']) as { port: number }).port, 82);
});

it('refuses what is not a known --flag with the same messages as before', () => {
  assert.equal(outcome(['--no-such-flag']), 'unknown option --no-such-flag');
  assert.equal(outcome(['--no-such-flag=1']), 'unknown option --no-such-flag');
  assert.equal(outcome(['stray']), 'unexpected argument "stray"');
  assert.equal(outcome(['-p', '80']), 'unexpected argument "-p"');
  assert.equal(outcome(['-abc']), 'unexpected argument "-abc"');
  assert.equal(outcome(['--port=80', '81']), 'unexpected argument "81"');
  assert.equal(outcome(['--port', '80', '81']), 'unexpected argument "81"');
  assert.equal(outcome(['--', '--port']), 'unknown option --');
  assert.equal(outcome(['--=x']), 'unknown option --');
  // A bare flag that takes no boolean is judged by its setting, naming the flag.
  assert.match(outcome(['--port']) as string, /^--port: /);
});
