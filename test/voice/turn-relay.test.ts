import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { GatewayClient } from '../gateway/gateway-client.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { VoiceTestClient } from '../support/voice-client.ts';
import { closeVoice, joinVoiceChannel } from '../support/voice-join.ts';

/**
 * TURN through a real coturn (docs/voice.md, "TURN with coturn"): the servers set in HEARTH_VOICE_TURN_* reach the
 * client in the signalling `ready`, and a member whose network allows nothing but the relay (its ICE offers only
 * relayed candidates) talks and listens through it. Debian's `coturn` package; .ci/run installs it when missing.
 */
const TURNSERVER = ['/usr/bin/turnserver', '/usr/sbin/turnserver'].find((path) => existsSync(path));
const USERNAME = 'hearth';
const CREDENTIAL = 'turn-secret';

let turn: ChildProcess | undefined;
let turnDir = '';
let turnUrl = '';
let server: TestServer;
let owner: TestUser;
let guild: { id: string; system_channel_id: string };
let room: string;
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

/** A UDP port free at this moment (coturn binds it right after). */
async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

async function startCoturn(): Promise<void> {
  if (!TURNSERVER) return;
  turnDir = await mkdtemp(joinPath(tmpdir(), 'hearth-coturn-'));
  const port = await freeUdpPort();
  const relayFrom = 50_000 + Math.floor(Math.random() * 140) * 100;
  turn = spawn(
    TURNSERVER,
    [
      '-n',
      '--listening-ip=127.0.0.1',
      `--listening-port=${port}`,
      '--relay-ip=127.0.0.1',
      `--min-port=${relayFrom}`,
      `--max-port=${relayFrom + 99}`,
      '--lt-cred-mech',
      `--user=${USERNAME}:${CREDENTIAL}`,
      '--realm=hearth.test',
      '--fingerprint',
      '--no-cli',
      '--no-tls',
      '--no-dtls',
      // The SFU listens on 127.0.0.1 in this test; a real deployment relays to public addresses.
      '--allow-loopback-peers',
      `--db=${joinPath(turnDir, 'turndb')}`,
      `--pidfile=${joinPath(turnDir, 'pid')}`,
      '--log-file=stdout',
      '--simple-log',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  turnUrl = `turn:127.0.0.1:${port}?transport=udp`;
  // coturn says when its listener is up; allocations before that are refused.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('coturn did not start in 10 s')), 10_000);
    let seen = '';
    turn?.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (/Total (UDP|General) servers|listener opened on/i.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    turn?.once('exit', (code) => reject(new Error(`coturn exited with ${code}: ${seen.slice(-500)}`)));
  });
}

before(async () => {
  if (!TURNSERVER) return;
  await startCoturn();
  server = await startTestServer({
    HEARTH_VOICE_TURN_URLS: turnUrl,
    HEARTH_VOICE_TURN_USERNAME: USERNAME,
    HEARTH_VOICE_TURN_CREDENTIAL: CREDENTIAL,
  });
  owner = await registerUser(server);
  guild = await newGuild(server, owner);
  room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }))).id;
});

after(async () => {
  await closeVoice({ gateways, voices });
  await server?.close();
  turn?.kill('SIGTERM');
  if (turnDir) await rm(turnDir, { recursive: true, force: true });
});

async function joinVoice(user: TestUser, relayOnly: boolean): Promise<VoiceTestClient> {
  const relay = { relayThrough: [{ urls: turnUrl, username: USERNAME, credential: CREDENTIAL }] };
  const voice = await joinVoiceChannel(
    server,
    user,
    { guildId: guild.id, channelId: room },
    { gateways, voices },
    relayOnly ? relay : {},
  );
  await voice.negotiations(1);
  return voice;
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('voice through a TURN relay (coturn)', { skip: TURNSERVER ? false : 'coturn is not installed' }, () => {
  it('the configured TURN server reaches the client in `ready`, and a relay-only member talks and listens', async () => {
    const alice = await registerUser(server);
    const bob = await registerUser(server);
    await join(server, owner, alice, guild);
    await join(server, owner, bob, guild);
    const a = await joinVoice(alice, false);
    const b = await joinVoice(bob, true);

    const ready = b.messages.find((m) => m.op === 'ready');
    assert.deepEqual(ready?.d.ice_servers, [{ urls: [turnUrl], username: USERNAME, credential: CREDENTIAL }]);

    // Bob's only candidates are relayed by coturn: whatever reaches him went through it.
    const bobCandidates = b.pc.localDescription?.sdp.match(/^a=candidate:.*$/gm) ?? [];
    assert.ok(bobCandidates.length > 0, 'bob gathered candidates');
    assert.ok(
      bobCandidates.every((line) => / typ relay /.test(line)),
      `bob offers relayed candidates only:\n${bobCandidates.join('\n')}`,
    );

    const speakUntil = async (voice: VoiceTestClient, heard: () => boolean, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!heard()) {
        if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
        await voice.speak(5);
      }
    };
    await speakUntil(a, () => (b.received.get(alice.id) ?? 0) >= 10, 'bob hears alice through the relay');
    await speakUntil(b, () => (a.received.get(bob.id) ?? 0) >= 10, 'alice hears bob through the relay');
    await until(() => b.pc.connectionState === 'connected', 'bob connected');
  });
});
