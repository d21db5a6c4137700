import { installNativeDtlsCrypto } from '../src/domains/voice/sfu/werift-native-crypto.ts';
import { as, ok } from '../test/support/chat.ts';
import { registerUser } from '../test/support/client.ts';
import type { TestServer } from '../test/support/server.ts';
import { BenchMember, type BenchTarget, now } from './voice-member.ts';
import { AudioTap } from './voice-tap.ts';

/**
 * A process of the voice bench's listeners (bench/voice.ts forks several, so that no client process starves):
 * on `prepare` it registers a user, accepts the guild's invite and brings the member online (gateway READY); on
 * `join` (preparing first if not prepared) it sends op 4 and joins the room receive-only (or, `speak`, as one of a
 * room's speakers, talking until the end), then answers
 * with the join's phases; between `start` and `stop` it records the delay of every packet its listeners receive
 * (the speaker's send time is in the payload; both ends read the same machine's clock).
 */
type Command =
  | { cmd: 'init'; target: BenchTarget; invite: string }
  | { cmd: 'prepare'; id: number; speak?: boolean }
  | { cmd: 'join'; id: number; speak?: boolean }
  | { cmd: 'start' }
  | { cmd: 'stop' }
  | { cmd: 'close' };

let target: BenchTarget | undefined;
let invite = '';
const members: BenchMember[] = [];
/** Users registered and in the guild ahead of their join (`prepare`), by listener id. */
const prepared = new Map<number, Promise<string>>();
/** Members online ahead of their join (`prepare`), by listener id. */
const online = new Map<number, Promise<BenchMember>>();
let recording = false;
let delays: number[] = [];
let received = 0;
/** Packets this process's speakers sent while recording. */
let sent = 0;
let closing = false;
/** BENCH_VOICE_TAP=0: every packet goes through werift's receive path, as before the light listeners. */
const TAP = process.env.BENCH_VOICE_TAP !== '0';
/** Members whose audio the tap reads (it removes itself if its reading ever differs from werift's). */
const taps: AudioTap[] = [];

const send = (message: unknown) => process.send?.(message);

/**
 * A browser does its DTLS public-key work natively; werift does it in JavaScript. The bench's clients use the same
 * node:crypto replacements as the SFU, so that a join wave measures the server rather than the clients'
 * JavaScript crypto on the same two cores (BENCH_VOICE_CLIENT_NATIVE_DTLS=0: werift's own, as before).
 */
if (process.env.BENCH_VOICE_CLIENT_NATIVE_DTLS !== '0') installNativeDtlsCrypto();

/** Registers a listener and accepts the guild's invite; resolves with its token. */
async function memberToken(id: number): Promise<string> {
  let token = prepared.get(id);
  if (!token) {
    if (!target) throw new Error('not initialised');
    const server = { url: target.url, port: target.port } as TestServer;
    token = registerUser(server).then(async (user) => {
      await ok(as(server, user, 'POST', `/invites/${invite}`));
      return user.token;
    });
    prepared.set(id, token);
  }
  return token;
}

/** Registers the listener if needed and brings it online (gateway READY), once per id. */
function onlineMember(id: number, speak: boolean): Promise<BenchMember> {
  let member = online.get(id);
  if (!member) {
    member = memberToken(id).then(async (token) => {
      if (!target) throw new Error('not initialised');
      const created = new BenchMember(target, token, speak);
      created.onClose = (closure) => send({ type: 'closed', id, ...closure });
      members.push(created);
      await created.online();
      return created;
    });
    online.set(id, member);
  }
  return member;
}

async function join(id: number, speak: boolean): Promise<void> {
  let error: string | undefined;
  let member: BenchMember | undefined;
  try {
    member = await onlineMember(id, speak);
    await member.join();
    const voice = member.voice;
    let tap: AudioTap | undefined;
    // A room's speakers hear each other too; only listeners' packets are measured.
    const record = (sendTime: number) => {
      if (!recording || speak) return;
      received++;
      delays.push(now() - sendTime);
    };
    if (voice && speak) void talk(voice);
    if (voice)
      voice.onPacket = (_from, packet) => {
        const sendTime = packet.payload.readDoubleLE(0);
        tap?.crossCheck(packet.header.sequenceNumber, packet.header.ssrc, sendTime);
        record(sendTime);
      };
    // The join ends at the first audio packet (or after 10 s: counted as a failed join).
    const deadline = Date.now() + 10_000;
    while (member.phases.firstAudio === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (voice && TAP && member.phases.firstAudio !== undefined) {
      tap = AudioTap.install(voice.pc, record);
      if (tap) taps.push(tap);
    }
  } catch (e) {
    error = (e as Error).message;
  }
  send({ type: 'joined', id, phases: member?.phases ?? {}, error });
}

/** A room's speaker talks until the process closes: 50 packets/s, each carrying its send time, as the first speaker. */
async function talk(voice: NonNullable<BenchMember['voice']>): Promise<void> {
  while (!closing) {
    const payload = Buffer.alloc(80, 0xf8);
    payload.writeDoubleLE(now(), 0);
    voice.sendAudioPacket(30, payload);
    if (recording) sent++;
    await new Promise((r) => setTimeout(r, 20));
  }
}

process.on('message', (message: Command) => {
  switch (message.cmd) {
    case 'init':
      target = message.target;
      invite = message.invite;
      send({ type: 'ready' });
      break;
    case 'prepare':
      void onlineMember(message.id, message.speak === true).then(
        () => send({ type: 'prepared', id: message.id }),
        (e) => send({ type: 'prepared', id: message.id, error: String(e) }),
      );
      break;
    case 'join':
      void join(message.id, message.speak === true).catch((e) =>
        send({ type: 'joined', id: message.id, phases: {}, error: String(e) }),
      );
      break;
    case 'start':
      delays = [];
      received = 0;
      sent = 0;
      recording = true;
      send({ type: 'started', cpuMicros: process.cpuUsage().user + process.cpuUsage().system });
      break;
    case 'stop':
      recording = false;
      send({
        type: 'window',
        received,
        sent,
        delays,
        cpuMicros: process.cpuUsage().user + process.cpuUsage().system,
        tapped: taps.filter((t) => t.active).length,
      });
      break;
    case 'close':
      closing = true;
      void Promise.all(members.map((m) => m.close())).finally(() => {
        send({ type: 'closed-all' });
        process.exit(0);
      });
      break;
  }
});
process.on('disconnect', () => process.exit(0));
