import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { installNativeDtlsCrypto } from '../src/domains/voice/sfu/werift-native-crypto.ts';
import { as, ok } from '../test/support/chat.ts';
import { registerUser } from '../test/support/client.ts';
import type { TestServer } from '../test/support/server.ts';
import { BenchMember, type Closure, type JoinPhases, now, PHASES } from './voice-member.ts';

/**
 * `npm run bench:voice`: one speaker to N listeners through the embedded SFU, then ten speakers in one room with N
 * listeners (issue 20's two shapes), Node WebRTC clients (werift). The
 * server runs in one child process; the listeners are spread over `BENCH_VOICE_CLIENT_PROCS` other children
 * (bench/voice-clients.ts, receive-only, default one per 50 listeners of the largest step, at least 2) so that the
 * figures are the SFU's and not one client process's starvation; the first speaker is in this process, the others of
 * a room in the client processes (each hears every other speaker, as in a real room). For each N:
 * p50/p99 of the delay from the speaker writing a packet to a listener receiving it (it includes both clients'
 * SRTP work and scheduling: an upper bound on what the SFU adds), loss, the server's CPU microseconds per
 * forwarded packet, and join time (op 4 → first audio packet received) p50/p95 with its phases. Members whose
 * sockets close are counted by close code. Runs every N until p99 ≥ 200 ms or loss > 5 % (saturated); the
 * largest N with p99 < 20 ms and loss ≤ 1 % is reported.
 */
const steps = (value: string) => value.split(',').filter(Boolean).map(Number);
const STEPS = steps(process.env.BENCH_VOICE_STEPS ?? '10,25,50,100,200,300');
/**
 * The room of many speakers: `BENCH_VOICE_ROOM_SPEAKERS` (default 10) talk at once, each heard by every other
 * member, with N listeners (`BENCH_VOICE_ROOM_STEPS`; empty skips the room): 500·(N + 9) forwarded packets/s.
 */
const ROOM_SPEAKERS = Number(process.env.BENCH_VOICE_ROOM_SPEAKERS ?? 10);
const ROOM_STEPS = steps(process.env.BENCH_VOICE_ROOM_STEPS ?? '5,10,20,30,50');
/** Client-process member ids of a room's other speakers (listeners count up from 0). */
const SPEAKER_ID_BASE = 1_000_000;
const WINDOW_MS = Number(process.env.BENCH_VOICE_WINDOW_MS ?? 5000);
/** Listeners joining at once (each waits for its first audio packet before the next batch). */
const JOIN_BATCH = Number(process.env.BENCH_VOICE_JOIN_BATCH ?? 10);
const CLIENT_PROCS = Number(
  process.env.BENCH_VOICE_CLIENT_PROCS ?? Math.min(8, Math.max(2, Math.ceil(Math.max(...STEPS, ...ROOM_STEPS) / 50))),
);
const PACKET_INTERVAL_MS = 20;
/**
 * Listeners are registered, made members of the guild and brought online (gateway READY) before the join waves
 * (people joining a voice channel are members, and online, already), so a wave measures op 4 and media, not account
 * creation or identify on the same event loop. BENCH_VOICE_PREPARE=0 registers each listener and identifies it in
 * its wave, as the bench did before.
 */
const PREPARE = process.env.BENCH_VOICE_PREPARE !== '0';
/** A join that has not heard the speaker after this long counts as failed. */
const JOIN_WAIT_MS = 10_000;

export interface VoiceStep {
  listeners: number;
  p50Ms: number;
  p99Ms: number;
  loss: number;
  cpuMicrosPerPacket: number;
  forwardedPerSecond: number;
  /** CPU of the client processes during the window, in cores (1 = one core busy). */
  clientCores: number;
  /** Members the SFU holds at the end of the window (listeners + speaker). */
  sfuMembers: number;
}

export interface VoiceBenchResult {
  /** Members talking at once (50 packets/s each), every one heard by all the others. */
  speakers: number;
  steps: VoiceStep[];
  joinP50Ms: number;
  joinP95Ms: number;
  joinFailures: number;
  joins: number;
  /** Server CPU (ms) during the join waves per join; it includes forwarding to the listeners already in. */
  joinCpuMs: number;
  /** Per phase of a join, p50/p95 in ms after op 4 (joins that reached it). */
  phases: { phase: keyof JoinPhases; p50: number; p95: number; reached: number }[];
  /** Sockets closed by the server during the run, by `socket code`. */
  closes: Record<string, number>;
  clientProcs: number;
  largestUnder20Ms: number;
}

function forkTs(file: string, extra: string[] = []): ChildProcess {
  return fork(fileURLToPath(new URL(file, import.meta.url)), [], { execArgv: ['--import', 'tsx', ...extra] });
}

function startServer(): Promise<{ child: ChildProcess; url: string; port: number }> {
  const child = forkTs('./voice-server.ts');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`voice bench server exited with ${code}`)));
    child.once('message', (m) => resolve({ child, ...(m as { url: string; port: number }) }));
  });
}

function ask<T>(child: ChildProcess, message: object = { cmd: 'stats' }): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(message);
  });
}

/** BENCH_VOICE_CPU_PROF=<dir>: a V8 CPU profile of the server during each step's window, `<dir>/voice-<N>.cpuprofile`. */
const PROFILE_DIR = process.env.BENCH_VOICE_CPU_PROF;
/** BENCH_VOICE_CPU_PROF_WAVES=1 (with BENCH_VOICE_CPU_PROF): profile each step's join waves instead of its window. */
const PROFILE_WAVES = process.env.BENCH_VOICE_CPU_PROF_WAVES === '1';

/** A listener process and its pending requests (joins by id, one window reply at a time). */
class ClientProcess {
  readonly child = forkTs('./voice-clients.ts');
  private readonly joins = new Map<number, (r: { phases: JoinPhases; error?: string }) => void>();
  private readonly preparing = new Map<number, (r: { error?: string }) => void>();
  private waiter: ((m: any) => void) | undefined;

  constructor(onClose: (closure: Closure & { id: number }) => void) {
    this.child.on('message', (m: any) => {
      if (m.type === 'joined') {
        this.joins.get(m.id)?.(m);
        this.joins.delete(m.id);
      } else if (m.type === 'prepared') {
        this.preparing.get(m.id)?.(m);
        this.preparing.delete(m.id);
      } else if (m.type === 'closed') onClose(m);
      else {
        const waiter = this.waiter;
        this.waiter = undefined;
        waiter?.(m);
      }
    });
  }

  request<T>(message: unknown): Promise<T> {
    return new Promise((resolve) => {
      this.waiter = resolve;
      this.child.send(message as object);
    });
  }

  /** Registers member `id`, makes it a member of the guild and brings it online, ahead of its join. */
  prepare(id: number, speak = false): Promise<{ error?: string }> {
    return new Promise((resolve) => {
      this.preparing.set(id, resolve);
      this.child.send({ cmd: 'prepare', id, speak });
    });
  }

  /** Joins member `id`: receive-only, or (`speak`) a speaker that talks until the end and records nothing. */
  join(id: number, speak = false): Promise<{ phases: JoinPhases; error?: string }> {
    return new Promise((resolve) => {
      this.joins.set(id, resolve);
      this.child.send({ cmd: 'join', id, speak });
    });
  }
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

/** One room per call: `speakerCount` talk to the listeners of each step in `stepTargets` (a fresh server each time). */
export async function runVoiceBench(
  speakerCount = 1,
  stepTargets: readonly number[] = STEPS,
): Promise<VoiceBenchResult> {
  const { child, url, port } = await startServer();
  const server = { url, port } as TestServer;
  const closes: Record<string, number> = {};
  const onClose = (closure: Closure) => {
    const key = `${closure.socket} ${closure.code}${closure.reason ? ` (${closure.reason})` : ''}`;
    closes[key] = (closes[key] ?? 0) + 1;
  };
  const procs = Array.from({ length: CLIENT_PROCS }, () => new ClientProcess(onClose));
  let speaker: BenchMember | undefined;
  try {
    const owner = await registerUser(server);
    const guild = await ok(as(server, owner, 'POST', '/guilds', { name: 'Voice bench' }));
    const invite = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { max_uses: 0 }));
    const channel = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'stage', type: 2 }));
    const target = { url, port, guildId: guild.id as string, channelId: channel.id as string };
    await Promise.all(procs.map((p) => p.request({ cmd: 'init', target, invite: invite.code })));

    // The speaker's DTLS as the listeners' (bench/voice-clients.ts): native, as a browser's.
    if (process.env.BENCH_VOICE_CLIENT_NATIVE_DTLS !== '0') installNativeDtlsCrypto();
    speaker = new BenchMember(target, owner.token, true);
    speaker.onClose = onClose;
    await speaker.join();
    const voice = speaker.voice;
    if (!voice) throw new Error('speaker has no voice client');
    // The speaker talks throughout: 50 packets/s, each carrying its send time.
    let talking = true;
    let sent = 0;
    const talk = (async () => {
      while (talking) {
        const payload = Buffer.alloc(80, 0xf8);
        payload.writeDoubleLE(now(), 0);
        voice.sendAudioPacket(30, payload);
        sent++;
        await new Promise((r) => setTimeout(r, PACKET_INTERVAL_MS));
      }
    })();
    // A room's other speakers, spread over the client processes.
    for (let i = 1; i < speakerCount; i++) {
      const proc = procs[i % procs.length] as ClientProcess;
      const id = SPEAKER_ID_BASE + i;
      const joined = (await proc.prepare(id, true)).error ?? (await proc.join(id, true)).error;
      if (joined) throw new Error(`speaker ${i + 1} could not join: ${joined}`);
    }

    const joins: JoinPhases[] = [];
    const steps: VoiceStep[] = [];
    let waveCpuMicros = 0;
    let listeners = 0;
    for (const stepTarget of stepTargets) {
      for (let id = listeners; PREPARE && id < stepTarget; id += JOIN_BATCH) {
        const ids = Array.from({ length: Math.min(JOIN_BATCH, stepTarget - id) }, (_, i) => id + i);
        const prepared = await Promise.all(ids.map((i) => (procs[i % procs.length] as ClientProcess).prepare(i)));
        const failed = prepared.filter((r) => r.error).map((r) => r.error);
        if (failed.length) throw new Error(`registering listeners failed: ${failed.join('; ')}`);
      }
      if (PROFILE_DIR && PROFILE_WAVES) await ask(child, { cmd: 'profile-start' });
      const waveStart = await ask<{ cpuMicros: number }>(child);
      while (listeners < stepTarget) {
        const batch = Math.min(JOIN_BATCH, stepTarget - listeners);
        const results = await Promise.all(
          Array.from({ length: batch }, (_, i) => {
            const id = listeners + i;
            return (procs[id % procs.length] as ClientProcess).join(id);
          }),
        );
        for (const r of results) joins.push(r.phases);
        listeners += batch;
        const failed = results.filter((r) => r.error).map((r) => r.error);
        console.error(`joined ${listeners}${failed.length ? ` (errors: ${failed.join('; ')})` : ''}`);
      }
      const waveEnd = await ask<{ cpuMicros: number; loop?: { p99Ms: number; maxMs: number } }>(child);
      waveCpuMicros += waveEnd.cpuMicros - waveStart.cpuMicros;
      console.error(`waves to ${stepTarget}: server event loop delay ${JSON.stringify(waveEnd.loop)}`);
      if (PROFILE_DIR && PROFILE_WAVES)
        await ask(child, {
          cmd: 'profile-stop',
          profile: `${PROFILE_DIR}/voice-waves-${speakerCount}x${stepTarget}.cpuprofile`,
        });
      await new Promise((r) => setTimeout(r, 1000));
      if (PROFILE_DIR && !PROFILE_WAVES) await ask(child, { cmd: 'profile-start' });
      const started = await Promise.all(procs.map((p) => p.request<{ cpuMicros: number }>({ cmd: 'start' })));
      const before = await ask<{ cpuMicros: number; sfu: { forwarded: number } }>(child);
      const sentBefore = sent;
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, WINDOW_MS));
      const after = await ask<{ cpuMicros: number; sfu: { forwarded: number; participants: number } }>(child);
      const windows = await Promise.all(
        procs.map((p) =>
          p.request<{ received: number; sent: number; delays: number[]; cpuMicros: number; tapped?: number }>({
            cmd: 'stop',
          }),
        ),
      );
      const elapsedMs = performance.now() - t0;
      if (PROFILE_DIR && !PROFILE_WAVES)
        await ask(child, {
          cmd: 'profile-stop',
          profile: `${PROFILE_DIR}/voice-${speakerCount}x${listeners}.cpuprofile`,
        });
      const delays = windows.flatMap((w) => w.delays);
      const received = windows.reduce((sum, w) => sum + w.received, 0);
      // Every listener should hear every packet of every speaker.
      const sentDuring = sent - sentBefore + windows.reduce((sum, w) => sum + w.sent, 0);
      const clientCpu = windows.reduce((sum, w, i) => sum + w.cpuMicros - (started[i]?.cpuMicros ?? 0), 0);
      const forwarded = after.sfu.forwarded - before.sfu.forwarded;
      const expected = sentDuring * listeners;
      const step: VoiceStep = {
        listeners,
        p50Ms: percentile(delays, 50),
        p99Ms: percentile(delays, 99),
        loss: expected > 0 ? Math.max(0, 1 - received / expected) : 0,
        cpuMicrosPerPacket: forwarded > 0 ? (after.cpuMicros - before.cpuMicros) / forwarded : Number.NaN,
        forwardedPerSecond: (forwarded / WINDOW_MS) * 1000,
        clientCores: clientCpu / 1000 / elapsedMs,
        sfuMembers: after.sfu.participants,
      };
      steps.push(step);
      // What the SFU holds at the end of the window (members, handshakes under way/queued): says why a step broke.
      console.log(
        formatStep(step),
        JSON.stringify(after.sfu),
        `speaker ${voice.pc.connectionState} ${JSON.stringify(speaker.phases)}, sent ${sentDuring}, received ${received}`,
        `members read by the audio tap: ${windows.reduce((sum, w) => sum + (w.tapped ?? 0), 0)}`,
        JSON.stringify(closes),
      );
      // A noisy shared machine can spike one step's p99, so the curve continues until it is clearly saturated.
      if (step.p99Ms >= 200 || step.loss > 0.05) break;
    }
    talking = false;
    await talk;
    const passing = steps.filter((s) => s.p99Ms < 20 && s.loss <= 0.01);
    const joinTimes = joins.map((p) => p.firstAudio ?? Number.POSITIVE_INFINITY);
    return {
      speakers: speakerCount,
      steps,
      joinP50Ms: percentile(joinTimes, 50),
      joinP95Ms: percentile(joinTimes, 95),
      joinFailures: joinTimes.filter((t) => !(t <= JOIN_WAIT_MS)).length,
      joins: joins.length,
      joinCpuMs: waveCpuMicros / 1000 / Math.max(1, joins.length),
      phases: PHASES.map((phase) => {
        const values = joins.map((j) => j[phase]).filter((v): v is number => v !== undefined);
        return { phase, p50: percentile(values, 50), p95: percentile(values, 95), reached: values.length };
      }),
      closes,
      clientProcs: procs.length,
      largestUnder20Ms: passing.length ? Math.max(...passing.map((s) => s.listeners)) : 0,
    };
  } finally {
    await speaker?.close();
    await Promise.all(
      procs.map((p) =>
        Promise.race([p.request({ cmd: 'close' }), new Promise((r) => setTimeout(r, 5000))]).then(() => p.child.kill()),
      ),
    );
    child.kill('SIGTERM');
  }
}

function formatStep(s: VoiceStep): string {
  return `N=${s.listeners}: delay p50 ${s.p50Ms.toFixed(2)} ms, p99 ${s.p99Ms.toFixed(2)} ms, loss ${(s.loss * 100).toFixed(2)} %, server CPU ${s.cpuMicrosPerPacket.toFixed(1)} µs/forwarded packet, ${Math.round(s.forwardedPerSecond)} packets/s forwarded, clients ${s.clientCores.toFixed(2)} cores, ${s.sfuMembers} members on the SFU`;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : `> ${JOIN_WAIT_MS / 1000} s`);

export function voiceTable(result: VoiceBenchResult): string {
  const one = result.speakers === 1;
  const rows = result.steps.map(
    (s) =>
      `| ${s.listeners} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${(s.loss * 100).toFixed(2)} % | ${s.cpuMicrosPerPacket.toFixed(1)} | ${Math.round(s.forwardedPerSecond)} | ${s.clientCores.toFixed(2)} | ${s.sfuMembers} |`,
  );
  const phases = result.phases.map((p) => `${p.phase} ${ms(p.p50)} / ${ms(p.p95)}`).join(', ');
  const closes = Object.entries(result.closes)
    .map(([key, n]) => `${key} × ${n}`)
    .join(', ');
  return [
    one
      ? `One speaker: listeners in ${result.clientProcs} client processes (receive-only), the speaker in the bench's own process, the server in another.`
      : `${result.speakers} speakers in one room, each heard by all the others: listeners in ${result.clientProcs} client processes (receive-only), the first speaker in the bench's own process, the others in the client processes, the server in another.`,
    '',
    `| Listeners (${result.speakers} ${one ? 'speaker' : 'speakers'}, 50 packets/s each) | Delay p50 (ms) | Delay p99 (ms) | Loss | Server CPU µs / forwarded packet | Forwarded packets/s | Client CPU (cores) | Members on the SFU |`,
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Largest N with p99 < 20 ms and loss ≤ 1 %: **${result.largestUnder20Ms}**. Join time (op 4 → first audio packet received) over ${result.joins} joins: p50 ${ms(result.joinP50Ms)} ms, p95 ${ms(result.joinP95Ms)} ms, ${result.joinFailures} failed (no audio within ${JOIN_WAIT_MS / 1000} s). Phases after op 4, p50 / p95 ms: ${phases}. Server CPU during the join waves: ${result.joinCpuMs.toFixed(1)} ms per join (it includes forwarding to the listeners already in).`,
    '',
    `Sockets closed by the server during the run: ${closes || 'none'}.`,
  ].join('\n');
}

/** Both shapes of issue 20: one speaker to N listeners, then the room of `ROOM_SPEAKERS` (unless its steps are empty). */
export async function runVoiceBenches(): Promise<VoiceBenchResult[]> {
  const results = [await runVoiceBench(1, STEPS)];
  if (ROOM_STEPS.length > 0) results.push(await runVoiceBench(ROOM_SPEAKERS, ROOM_STEPS));
  return results;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const result of await runVoiceBenches()) console.log(`\n${voiceTable(result)}`);
  process.exit(0);
}
