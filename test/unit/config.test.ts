import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, SETTINGS } from '../../src/config/config.ts';

const TEST_ENV = { HEARTH_TEST_MODE: '1', HEARTH_TEST_TOKEN: 't' };

function configError(env: Record<string, string>, argv: string[] = []): string {
  try {
    loadConfig(env, argv);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error.message;
  }
  assert.fail('expected the configuration to be refused');
}

describe('loadConfig', () => {
  it('has defaults for everything', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.redisPrefix, 'hearth:');
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.equal(config.webappUrl, 'http://localhost:8080');
    assert.deepEqual(config.trustedProxies, []);
    assert.equal(config.testMode, false);
    assert.equal(config.testToken, undefined);
    assert.equal(config.ipBanFailures, 50);
    assert.equal(config.ipBanWindowSeconds, 600);
    assert.equal(config.ipBanDurationSeconds, 3600);
  });

  it('refuses a read replica without a PostgreSQL primary, and takes one with it', () => {
    assert.equal(
      configError({ DATABASE_REPLICA_URL: 'postgres://hearth@replica.example/hearth' }),
      'DATABASE_REPLICA_URL: needs DATABASE_URL (the embedded database has no replica)',
    );
    const config = loadConfig({
      DATABASE_URL: 'postgres://hearth@primary.example/hearth',
      DATABASE_REPLICA_URL: 'postgres://hearth@replica.example/hearth',
    });
    assert.equal(config.databaseReplicaUrl, 'postgres://hearth@replica.example/hearth');
    assert.equal(loadConfig({}).databaseReplicaUrl, undefined);
  });

  it('reads every setting from its environment variable and from its flag', () => {
    const env = {
      PORT: '9001',
      HOST: '127.0.0.1',
      HEARTH_DATA_DIR: '/tmp/x',
      DATABASE_URL: 'postgres://u@db:5432/h',
      REDIS_URL: 'redis://cache:6379',
      SMTP_URL: 'smtp://mail:25',
      HEARTH_PUBLIC_URL: 'https://chat.example.com/',
      HEARTH_TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1',
      ...TEST_ENV,
    };
    const fromEnv = loadConfig(env);
    assert.equal(fromEnv.port, 9001);
    assert.equal(fromEnv.host, '127.0.0.1');
    assert.equal(fromEnv.dataDir, '/tmp/x');
    assert.equal(fromEnv.databaseUrl, 'postgres://u@db:5432/h');
    assert.equal(fromEnv.redisUrl, 'redis://cache:6379');
    assert.equal(fromEnv.smtpUrl, 'smtp://mail:25');
    assert.equal(fromEnv.publicUrl, 'https://chat.example.com');
    assert.equal(fromEnv.webappUrl, 'https://chat.example.com');
    assert.deepEqual(
      fromEnv.trustedProxies.map((c) => c.text),
      ['10.0.0.0/8', '127.0.0.1'],
    );
    assert.equal(fromEnv.testMode, true);
    assert.equal(fromEnv.testToken, 't');

    const fromFlags = loadConfig({}, [
      '--port',
      '9002',
      '--host=::1',
      '--data-dir',
      '/tmp/y',
      '--database-url=postgresql://db/h',
      '--redis-url',
      'rediss://cache',
      '--smtp-url',
      'smtps://mail',
      '--public-url',
      'http://h.example:8000',
      '--trusted-proxies',
      '192.0.2.0/24',
      '--test-mode',
      '--test-token',
      'tok',
    ]);
    assert.equal(fromFlags.port, 9002);
    assert.equal(fromFlags.host, '::1');
    assert.equal(fromFlags.dataDir, '/tmp/y');
    assert.equal(fromFlags.databaseUrl, 'postgresql://db/h');
    assert.equal(fromFlags.redisUrl, 'rediss://cache');
    assert.equal(fromFlags.smtpUrl, 'smtps://mail');
    assert.equal(fromFlags.publicUrl, 'http://h.example:8000');
    assert.deepEqual(
      fromFlags.trustedProxies.map((c) => c.text),
      ['192.0.2.0/24'],
    );
    assert.equal(fromFlags.testMode, true);
    assert.equal(fromFlags.testToken, 'tok');
  });

  it('reads Redis cluster seed nodes as host:port or redis(s) URLs, and refuses them beside REDIS_URL', () => {
    assert.deepEqual(loadConfig({}).redisClusterNodes, []);
    assert.deepEqual(
      loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, rediss://u:p@cache.example:7001,' }).redisClusterNodes,
      ['redis://10.0.0.1:7000', 'rediss://u:p@cache.example:7001'],
    );
    assert.deepEqual(loadConfig({}, ['--redis-cluster-nodes', 'a:1,b:2']).redisClusterNodes, [
      'redis://a:1',
      'redis://b:2',
    ]);
    assert.match(
      configError({ REDIS_CLUSTER_NODES: 'cache' }),
      /^REDIS_CLUSTER_NODES: "cache" needs a host and a port$/,
    );
    assert.match(
      configError({ REDIS_CLUSTER_NODES: 'http://a:1' }),
      /^REDIS_CLUSTER_NODES: "http:\/\/a:1" must use redis: or rediss:$/,
    );
    assert.match(
      configError({ REDIS_URL: 'redis://a:1', REDIS_CLUSTER_NODES: 'b:2' }),
      /^REDIS_CLUSTER_NODES: set either REDIS_URL \(one server\) or REDIS_CLUSTER_NODES, not both$/,
    );
  });

  it('lets a flag win over the environment', () => {
    assert.equal(loadConfig({ PORT: '1000' }, ['--port=2000']).port, 2000);
  });

  it('reads booleans, lists, roles and rate limits into their types', () => {
    const config = loadConfig({
      ...TEST_ENV,
      HEARTH_IP_AUTHORIZATION: ' Off ',
      HEARTH_ROLES: 'api, media',
      HEARTH_RATE_LIMITS: '{"auth:login":{"limit":3,"windowSeconds":10}}',
      HEARTH_LOG_FORMAT: 'pretty',
    });
    assert.equal(config.ipAuthorization, false);
    assert.deepEqual([...config.roles], ['api', 'media']);
    assert.deepEqual(config.rateLimitOverrides, { 'auth:login': { limit: 3, windowSeconds: 10 } });
    assert.equal(config.logFormat, 'pretty');
    assert.equal(loadConfig({}).logFormat, 'json');
  });

  it('derives the public URL default from the port', () => {
    assert.equal(loadConfig({ PORT: '9100' }).publicUrl, 'http://localhost:9100');
  });

  it('names the setting and the problem for every bad value', () => {
    const cases: [Record<string, string>, string[], RegExp][] = [
      [{ PORT: 'abc' }, [], /^PORT: must be an integer, got "abc"$/],
      [{ PORT: '70000' }, [], /^PORT: must be between 0 and 65535, got 70000$/],
      [{}, ['--port', 'x'], /^--port: must be an integer/],
      [{ HEARTH_PUBLIC_URL: 'ftp://x' }, [], /^HEARTH_PUBLIC_URL: must use http or https$/],
      [{ HEARTH_PUBLIC_URL: 'not a url' }, [], /^HEARTH_PUBLIC_URL: must be an absolute URL/],
      [{ DATABASE_URL: 'mysql://x' }, [], /^DATABASE_URL: must use postgres: or postgresql:$/],
      [{ REDIS_URL: 'http://x' }, [], /^REDIS_URL: must use redis: or rediss:$/],
      [{ SMTP_URL: 'mail.example' }, [], /^SMTP_URL: must be a URL$/],
      [{ HEARTH_TRUSTED_PROXIES: '10.0.0.0/40' }, [], /^HEARTH_TRUSTED_PROXIES: .*bad prefix length$/],
      [{ HEARTH_TRUSTED_PROXIES: 'proxy.local' }, [], /^HEARTH_TRUSTED_PROXIES: .*not an IP address/],
      [{ HEARTH_TEST_MODE: 'maybe' }, [], /^HEARTH_TEST_MODE: must be a boolean/],
      [{ HEARTH_TEST_MODE: '1' }, [], /^HEARTH_TEST_TOKEN: must be set when HEARTH_TEST_MODE is on$/],
      [{ HEARTH_SUDO_SECRET: 'short' }, [], /^HEARTH_SUDO_SECRET: must be at least 32 characters$/],
      [{ HEARTH_RATE_LIMITS: '{' }, [], /^HEARTH_RATE_LIMITS: must be a JSON object/],
      [{ HEARTH_RATE_LIMITS: '{"a":{"limit":0,"windowSeconds":1}}' }, [], /^HEARTH_RATE_LIMITS: bucket "a"/],
      [{ HEARTH_LOG_LEVEL: 'loud' }, [], /^HEARTH_LOG_LEVEL: must be one of/],
      [{ HEARTH_IP_BAN_FAILURES: '-1' }, [], /^HEARTH_IP_BAN_FAILURES: must be between/],
      [{ HEARTH_LOG_FORMAT: 'xml' }, [], /^HEARTH_LOG_FORMAT: must be json or pretty$/],
      [{ HEARTH_ROLES: 'api,bogus' }, [], /^HEARTH_ROLES: unknown role "bogus" \(api, gateway, media, voice\)$/],
      [{ HEARTH_ROLES: ' , ' }, [], /^HEARTH_ROLES: needs at least one role$/],
      [
        { HEARTH_CAPTCHA_PROVIDER: 'recaptcha' },
        [],
        /^HEARTH_CAPTCHA_PROVIDER: must be one of none, hcaptcha, turnstile, got "recaptcha"$/,
      ],
      [
        { HEARTH_VOICE_TURN_URLS: 'stun:a, http://x' },
        [],
        /^HEARTH_VOICE_TURN_URLS: "http:\/\/x" is not a stun:, turn: or turns: URL$/,
      ],
      [
        { HEARTH_VOICE_ENDPOINT: 'https://voice.example.org/voice' },
        [],
        /^HEARTH_VOICE_ENDPOINT: must be a ws:\/\/ or wss:\/\/ URL$/,
      ],
      [{ HEARTH_VOICE_NODE_TTL_S: '1' }, [], /^HEARTH_VOICE_NODE_TTL_S: must be between 3 and 300, got 1$/],
      [{ HEARTH_VOICE_PORT_RANGE: '5-6' }, [], /^HEARTH_VOICE_PORT_RANGE: must be "min-max" within 1024-65535$/],
      [{ HEARTH_S3_REGION: '  ' }, [], /^HEARTH_S3_REGION: must not be empty$/],
      [{ HEARTH_S3_ENDPOINT: 'http://u:p@s3.example' }, [], /^HEARTH_S3_ENDPOINT: must not contain credentials/],
      [{ HEARTH_RATE_LIMITS: '[]' }, [], /^HEARTH_RATE_LIMITS: must be a JSON object$/],
      [{}, ['--no-such-flag'], /^unknown option --no-such-flag$/],
      [{}, ['stray'], /^unexpected argument "stray"$/],
    ];
    for (const [env, argv, pattern] of cases) assert.match(configError(env, argv), pattern, JSON.stringify(env));
  });

  it('gives every setting a distinct env var, a distinct --flag and a description', () => {
    const envs = SETTINGS.map((s) => s.env);
    const flags = SETTINGS.map((s) => s.flag);
    assert.equal(new Set(envs).size, envs.length);
    assert.equal(new Set(flags).size, flags.length);
    for (const s of SETTINGS) {
      assert.match(s.flag, /^--[a-z0-9-]+$/);
      assert.match(s.env, /^[A-Z][A-Z0-9_]*$/);
      assert.ok(s.describe.length > 5);
    }
    for (const required of [
      'PORT',
      'HOST',
      'DATABASE_URL',
      'REDIS_URL',
      'SMTP_URL',
      'HEARTH_DATA_DIR',
      'HEARTH_PUBLIC_URL',
      'HEARTH_TRUSTED_PROXIES',
      'HEARTH_TEST_MODE',
      'HEARTH_TEST_TOKEN',
    ])
      assert.ok(envs.includes(required), required);
  });
});
