import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { readyClient } from '../gateway/gateway-client.ts';
import { registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'metrics-token-metrics-token-metrics-token';
const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function scrape(url: string, auth?: string) {
  const res = await fetch(url, auth ? { headers: { authorization: auth } } : {});
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** The value of one series, e.g. `hearth_gateway_connections` or `x{a="b"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('Prometheus metrics', () => {
  test('without HEARTH_METRICS_TOKEN /metrics does not exist on the main port', async () => {
    const server = await startTestServer();
    servers.push(server);
    const res = await request(server, 'GET', '/metrics', { auth: `Bearer ${TOKEN}` });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'NOT_FOUND');
    assert.equal(server.app.metricsPort, undefined);
  });

  test('with a token: 401 without it or with another, and the figures with it', async () => {
    const server = await startTestServer({ HEARTH_METRICS_TOKEN: TOKEN });
    servers.push(server);
    for (const auth of [undefined, 'Bearer wrong', `Bot ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await request(server, 'GET', '/metrics', auth ? { auth } : {});
      assert.equal(res.status, 401, String(auth));
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
    const user = await registerUser(server);
    for (let i = 0; i < 3; i++)
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);
    const { client } = await readyClient(server, user.token);
    try {
      const res = await scrape(`${server.url}/metrics`, `Bearer ${TOKEN}`);
      assert.equal(res.status, 200);
      assert.match(res.type ?? '', /^text\/plain; version=0\.0\.4/);
      // Request rate and latency by route pattern (never the URL).
      assert.equal(sample(res.text, 'hearth_http_requests_total{method="GET",route="/v1/users/@me",status="200"}'), 3);
      assert.equal(
        sample(res.text, 'hearth_http_request_duration_seconds_count{method="GET",route="/v1/users/@me"}'),
        3,
      );
      assert.doesNotMatch(res.text, new RegExp(user.token));
      assert.equal(sample(res.text, 'hearth_gateway_connections'), 1);
      assert.equal(sample(res.text, 'hearth_gateway_sessions'), 1);
      // Registration hashed a password: the queue is empty again.
      assert.equal(sample(res.text, 'hearth_argon2_hashes{state="running"}'), 0);
      assert.equal(sample(res.text, 'hearth_argon2_hashes{state="waiting"}'), 0);
      // Event-loop lag and the process figures come with the client library's defaults.
      assert.ok(sample(res.text, 'hearth_nodejs_eventloop_lag_seconds') !== undefined);
      assert.ok(sample(res.text, 'hearth_process_resident_memory_bytes') !== undefined);
      // READY's own presence went out as a dispatch: fan-out latency has observations.
      assert.match(res.text, /^hearth_gateway_dispatch_fanout_seconds_count \d+$/m);
      if (process.env.TEST_DATABASE_URL)
        assert.ok((sample(res.text, 'hearth_db_pool_connections{state="total"}') ?? 0) >= 1);
    } finally {
      await client.close(1000);
    }
  });

  test('HEARTH_METRICS_PORT serves the same text on its own port, without a token, and nothing else', async () => {
    const server = await startTestServer({ HEARTH_METRICS_PORT: '0' });
    servers.push(server);
    const port = server.app.metricsPort;
    assert.ok(port && port !== server.port);
    const res = await scrape(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.text, /^# TYPE hearth_http_requests_total counter$/m);
    assert.equal((await scrape(`http://127.0.0.1:${port}/v1/users/@me`)).status, 404);
    assert.equal((await request(server, 'GET', '/metrics')).status, 404);
  });
});
