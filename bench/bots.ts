/**
 * Bot benchmarks (issue 17): the interaction round trip and bulk command registration.
 *
 *   npm run bench:bots        embedded PGlite (PostgreSQL when TEST_DATABASE_URL is set)
 *
 * Round trip: a person invokes a slash command through `POST /v1/interactions`; the bot, connected to the
 * gateway, gets INTERACTION_CREATE and answers with a type 4 callback; the clock stops when the person's
 * gateway connection receives the reply's MESSAGE_CREATE. 200 sequential invocations after 20 for warm-up.
 * Registration: `PUT /applications/{id}/commands` with 100 chat-input commands (each with two options),
 * first on an empty application, then overwriting the same list.
 *
 * Server, bot and person share this one process (as in the tests), so the figures include the clients' own
 * work. The person's account carries RATE_LIMIT_BYPASS so the 10-per-5-seconds interaction limit does not
 * pace the loop.
 */
import { type GatewayClient, readyClient } from '../test/gateway/gateway-client.ts';
import { registerUser, request } from '../test/support/client.ts';
import { startTestServer } from '../test/support/server.ts';

export interface BotsBenchResult {
  storage: string;
  invocations: number;
  roundTripP50Ms: number;
  roundTripP99Ms: number;
  roundTripMaxMs: number;
  registerFirstMs: number;
  registerOverwriteMedianMs: number;
}

const INVOCATIONS = Number(process.env.BENCH_INVOCATIONS ?? 200);
const WARMUP = 20;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function runBotsBench(): Promise<BotsBenchResult> {
  const server = await startTestServer();
  const clients: GatewayClient[] = [];
  try {
    const person = await registerUser(server);
    await server.app.services.db.query('UPDATE users SET flags = flags | $2::bigint WHERE id = $1', [
      person.id,
      String(1n << 47n),
    ]);
    const guild = await request(server, 'POST', '/v1/guilds', { auth: person.token, body: { name: 'Bench' } });
    const guildId: string = guild.body.id;
    const channelId: string = guild.body.system_channel_id;
    const app = await request(server, 'POST', '/v1/oauth2/applications', { auth: person.token, body: { name: 'B' } });
    const appId: string = app.body.id;
    const botAuth = `Bot ${app.body.bot.token}`;
    const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
      auth: person.token,
      body: { client_id: appId, scope: 'bot', guild_id: guildId, permissions: String((1n << 10n) | (1n << 11n)) },
    });
    if (consent.status !== 200) throw new Error(`consent: ${consent.text}`);

    // Bulk registration of 100 commands.
    const commands = Array.from({ length: 100 }, (_, i) => ({
      name: `command-${i}`,
      description: `Command number ${i}`,
      options: [
        { type: 3, name: 'text', description: 'Some text', required: true },
        { type: 4, name: 'count', description: 'A number', min_value: 0, max_value: 10 },
      ],
    }));
    const put = async () => {
      const started = performance.now();
      const res = await request(server, 'PUT', `/v1/applications/${appId}/commands`, { auth: botAuth, body: commands });
      const ms = performance.now() - started;
      if (res.status !== 200 || res.body.length !== 100) throw new Error(`bulk overwrite: ${res.status}`);
      return { ms, body: res.body as { id: string; name: string }[] };
    };
    const first = await put();
    const overwrites: number[] = [];
    for (let i = 0; i < 9; i++) overwrites.push((await put()).ms);
    overwrites.sort((a, b) => a - b);
    const echoId = first.body.find((c) => c.name === 'command-0')?.id;

    // The bot answers every interaction with its text option, as a type 4 reply.
    const { client: bot } = await readyClient(server, app.body.bot.token);
    const { client: personGw } = await readyClient(server, person.token);
    clients.push(bot, personGw);
    bot.ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { t?: string; d?: any };
      if (frame.t !== 'INTERACTION_CREATE') return;
      const d = frame.d;
      void fetch(`${server.url}/v1/interactions/${d.id}/${d.token}/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 4, data: { content: d.data.options[0].value } }),
      }).then((r) => r.arrayBuffer());
    });

    const times: number[] = [];
    for (let i = 0; i < WARMUP + INVOCATIONS; i++) {
      const marker = `rt-${i}-${Math.random().toString(36).slice(2)}`;
      const started = performance.now();
      const seen = personGw.next((f) => f.t === 'MESSAGE_CREATE' && (f.d as any).content === marker, 10_000);
      const invoked = await request(server, 'POST', '/v1/interactions', {
        auth: person.token,
        body: {
          type: 2,
          application_id: appId,
          guild_id: guildId,
          channel_id: channelId,
          data: { id: echoId, name: 'command-0', type: 1, options: [{ name: 'text', type: 3, value: marker }] },
        },
      });
      if (invoked.status !== 204) throw new Error(`invoke: ${invoked.status} ${invoked.text}`);
      await seen;
      if (i >= WARMUP) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const round = (n: number) => Math.round(n * 10) / 10;
    return {
      storage: process.env.TEST_DATABASE_URL ? 'postgresql' : 'pglite',
      invocations: INVOCATIONS,
      roundTripP50Ms: round(percentile(times, 50)),
      roundTripP99Ms: round(percentile(times, 99)),
      roundTripMaxMs: round(times[times.length - 1] ?? Number.NaN),
      registerFirstMs: round(first.ms),
      registerOverwriteMedianMs: round(percentile(overwrites, 50)),
    };
  } finally {
    for (const c of clients) await c.close();
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runBotsBench();
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `interaction round trip over ${result.invocations}: p50 ${result.roundTripP50Ms} ms, p99 ${result.roundTripP99Ms} ms (target < 50 ms); ` +
      `PUT of 100 commands: ${result.registerFirstMs} ms first, ${result.registerOverwriteMedianMs} ms median overwrite (target < 200 ms)`,
  );
}
