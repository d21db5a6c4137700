import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CipherContext, DtlsClient, type RTCDtlsTransport, type RTCPeerConnection } from 'werift';
import { type Frame, type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { VoiceTestClient } from '../support/voice-client.ts';
import { closeVoice, joinVoiceChannel } from '../support/voice-join.ts';

let server: TestServer;
let owner: TestUser;
let guild: { id: string; system_channel_id: string };
let room: string;
/** The owner's gateway session: what the guild hears of who is in voice. */
let observer: GatewayClient;
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

/**
 * Makes this werift client's CertificateVerify signature wrong (one flipped byte, still well-formed DER): a client
 * that presents the certificate whose fingerprint is in its SDP without holding its private key.
 */
function corruptCertificateVerify(pc: RTCPeerConnection): { signed: number; dtlsStates: string[] } {
  const made = { signed: 0, dtlsStates: [] as string[] };
  const hooked = new WeakSet<RTCDtlsTransport>();
  pc.iceConnectionStateChange.subscribe(() => {
    for (const transport of pc.dtlsTransports) {
      if (hooked.has(transport)) continue;
      hooked.add(transport);
      transport.onStateChange.subscribe((state) => {
        made.dtlsStates.push(state);
        if (state !== 'connecting') return;
        // werift creates the DTLS socket right after announcing `connecting`, in the same synchronous step.
        queueMicrotask(() => {
          const dtls = transport.dtls;
          if (!(dtls instanceof DtlsClient)) return;
          const cipher = dtls.cipher;
          cipher.signatureData = (data: Buffer, hash: string) => {
            made.signed++;
            const signature = Buffer.from(CipherContext.prototype.signatureData.call(cipher, data, hash));
            signature[signature.length - 1] = (signature[signature.length - 1] ?? 0) ^ 1;
            return signature;
          };
        });
      });
    }
  });
  return made;
}

async function joinVoice(user: TestUser): Promise<VoiceTestClient> {
  await join(server, owner, user, guild);
  return joinVoiceChannel(server, user, { guildId: guild.id, channelId: room }, { gateways, voices });
}

function connected(voice: VoiceTestClient): Promise<void> {
  return new Promise((resolve) =>
    voice.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') resolve();
    }),
  );
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  guild = await newGuild(server, owner);
  room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }))).id;
  ({ client: observer } = await readyClient(server, owner.token));
  gateways.push(observer);
});

/** A VOICE_STATE_UPDATE of the guild for `userId` in `channelId` (null: they left). */
function voiceUpdate(userId: string, channelId: string | null): (f: Frame) => boolean {
  return (f) =>
    f.t === 'VOICE_STATE_UPDATE' &&
    (f.d as { user_id?: string }).user_id === userId &&
    (f.d as { channel_id?: string | null }).channel_id === channelId;
}

after(async () => {
  await closeVoice({ gateways, voices });
  await server.close();
});

describe('the client’s DTLS CertificateVerify (docs/voice.md#join-admission)', () => {
  it('a client whose signature does not verify never gets media and is counted; an honest one hears the room', async () => {
    const stats = () => {
      const s = server.app.sfu?.stats();
      assert.ok(s, 'this server runs the SFU');
      return s;
    };
    const refusedBefore = stats().handshakes.refused;
    const speakerUser = await registerUser(server);
    const speaker = await joinVoice(speakerUser);
    const speakerConnected = connected(speaker);
    await speaker.negotiations(1);
    await speakerConnected;

    const liarUser = await registerUser(server);
    const liar = await joinVoice(liarUser);
    const lie = corruptCertificateVerify(liar.pc);
    await liar.negotiations(1);

    const honestUser = await registerUser(server);
    const honest = await joinVoice(honestUser);
    const honestConnected = connected(honest);
    await honest.negotiations(1);
    await honestConnected;

    // Everyone speaks while the liar's handshake runs and is refused (werift's client ignores the fatal alert and
    // retransmits its last flight, which the SFU no longer answers).
    const deadline = Date.now() + 8000;
    while (
      ((honest.received.get(speakerUser.id) ?? 0) < 20 || stats().handshakes.refused === refusedBefore) &&
      Date.now() < deadline
    )
      await Promise.all([speaker.speak(5), liar.speak(5)]);
    await Promise.all([speaker.speak(25), liar.speak(25)]);

    assert.ok(lie.signed >= 1, 'the liar signed a CertificateVerify');
    assert.equal(stats().handshakes.refused, refusedBefore + 1, 'the SFU counted one refused handshake');
    assert.ok((honest.received.get(speakerUser.id) ?? 0) >= 20, 'the honest member hears the speaker');
    assert.equal(liar.received.get(speakerUser.id) ?? 0, 0, 'the liar hears nothing');
    assert.equal(speaker.received.get(liarUser.id) ?? 0, 0, 'nobody hears the liar');
    assert.equal(honest.received.get(liarUser.id) ?? 0, 0, 'nobody hears the liar');
    // (werift's peer connection may still say `connected`: it skips DTLS when ICE is connected at a renegotiation.)
    assert.ok(!lie.dtlsStates.includes('connected'), `the liar's DTLS states: ${lie.dtlsStates.join(', ')}`);

    // The refused member is out of the room and of the voice channel, as at a leave: the guild hears it.
    const left = (await observer.next(voiceUpdate(liarUser.id, null), 5000)).d as Record<string, unknown>;
    assert.equal(left.guild_id, guild.id);
    assert.equal(left.channel_id, null);
    assert.equal((left.member as { user: { id: string } }).user.id, liarUser.id);
    assert.deepEqual(await liar.closed, { code: 4014, reason: 'Media connection failed' });
    assert.deepEqual(
      liar.messages.filter((m) => m.op === 'closed'),
      [{ op: 'closed', d: { reason: 'failed' } }],
    );
    assert.equal(stats().participants, 2, 'the speaker and the honest member stay in the room');
    // Only the liar left: a session identifying now sees the two others in the channel, and not the liar.
    assert.ok(await observer.nothing((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as any).channel_id === null));
    const { client: late, ready } = await readyClient(server, owner.token);
    gateways.push(late);
    const listed = (ready.d as any).guilds.find((g: { id: string }) => g.id === guild.id).voice_states as {
      user_id: string;
      channel_id: string;
    }[];
    assert.deepEqual(
      listed.map((v) => [v.user_id, v.channel_id]).sort(),
      [
        [speakerUser.id, room],
        [honestUser.id, room],
      ].sort(),
    );
  });
});
