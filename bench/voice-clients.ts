import { as, ok } from '../test/support/chat.ts';
import { registerUser } from '../test/support/client.ts';
import type { TestServer } from '../test/support/server.ts';
import { BenchMember, type BenchTarget, now } from './voice-member.ts';

/**
 * A process of the voice bench's listeners (bench/voice.ts forks several, so that no client process starves):
 * on `prepare` it registers a user and accepts the guild's invite, on `join` (registering first if not prepared)
 * it joins the room receive-only, then answers with the join's phases; between `start` and `stop` it records the delay of every packet its listeners receive
 * (the speaker's send time is in the payload; both ends read the same machine's clock).
 */
type Command =
  | { cmd: 'init'; target: BenchTarget; invite: string }
  | { cmd: 'prepare'; id: number }
  | { cmd: 'join'; id: number }
  | { cmd: 'start' }
  | { cmd: 'stop' }
  | { cmd: 'close' };

let target: BenchTarget | undefined;
let invite = '';
const members: BenchMember[] = [];
/** Users registered and in the guild ahead of their join (`prepare`), by listener id. */
const prepared = new Map<number, Promise<string>>();
let recording = false;
let delays: number[] = [];
let received = 0;

const send = (message: unknown) => process.send?.(message);

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

async function join(id: number): Promise<void> {
  if (!target) throw new Error('not initialised');
  const member = new BenchMember(target, await memberToken(id), false);
  member.onClose = (closure) => send({ type: 'closed', id, ...closure });
  members.push(member);
  let error: string | undefined;
  try {
    await member.join();
    const voice = member.voice;
    if (voice)
      voice.onPacket = (_from, packet) => {
        if (!recording) return;
        received++;
        delays.push(now() - packet.payload.readDoubleLE(0));
      };
    // The join ends at the first audio packet (or after 10 s: counted as a failed join).
    const deadline = Date.now() + 10_000;
    while (member.phases.firstAudio === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  } catch (e) {
    error = (e as Error).message;
  }
  send({ type: 'joined', id, phases: member.phases, error });
}

process.on('message', (message: Command) => {
  switch (message.cmd) {
    case 'init':
      target = message.target;
      invite = message.invite;
      send({ type: 'ready' });
      break;
    case 'prepare':
      void memberToken(message.id).then(
        () => send({ type: 'prepared', id: message.id }),
        (e) => send({ type: 'prepared', id: message.id, error: String(e) }),
      );
      break;
    case 'join':
      void join(message.id).catch((e) => send({ type: 'joined', id: message.id, phases: {}, error: String(e) }));
      break;
    case 'start':
      delays = [];
      received = 0;
      recording = true;
      send({ type: 'started', cpuMicros: process.cpuUsage().user + process.cpuUsage().system });
      break;
    case 'stop':
      recording = false;
      send({ type: 'window', received, delays, cpuMicros: process.cpuUsage().user + process.cpuUsage().system });
      break;
    case 'close':
      void Promise.all(members.map((m) => m.close())).finally(() => {
        send({ type: 'closed-all' });
        process.exit(0);
      });
      break;
  }
});
process.on('disconnect', () => process.exit(0));
