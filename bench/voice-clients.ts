import { as, ok } from '../test/support/chat.ts';
import { registerUser } from '../test/support/client.ts';
import type { TestServer } from '../test/support/server.ts';
import { BenchMember, type BenchTarget, now } from './voice-member.ts';

/**
 * A process of the voice bench's listeners (bench/voice.ts forks several, so that no client process starves):
 * on `join` it registers a user, accepts the invite and joins the room receive-only, then answers with the
 * join's phases; between `start` and `stop` it records the delay of every packet its listeners receive
 * (the speaker's send time is in the payload; both ends read the same machine's clock).
 */
type Command =
  | { cmd: 'init'; target: BenchTarget; invite: string }
  | { cmd: 'join'; id: number }
  | { cmd: 'start' }
  | { cmd: 'stop' }
  | { cmd: 'close' };

let target: BenchTarget | undefined;
let invite = '';
const members: BenchMember[] = [];
let recording = false;
let delays: number[] = [];
let received = 0;

const send = (message: unknown) => process.send?.(message);

async function join(id: number): Promise<void> {
  if (!target) throw new Error('not initialised');
  const server = { url: target.url, port: target.port } as TestServer;
  const user = await registerUser(server);
  await ok(as(server, user, 'POST', `/invites/${invite}`));
  const member = new BenchMember(target, user.token, false);
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
