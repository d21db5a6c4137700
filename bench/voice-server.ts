import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/platform/log.ts';
import { loadOrCreateSecrets } from '../src/platform/secrets.ts';

/**
 * The server of the voice bench in its own process (its CPU is what the bench measures): embedded default,
 * test mode (no rate limits), no per-address socket cap to speak of, warnings only. Answers `{cmd:'stats'}` with its CPU time and SFU counters.
 */
const dataDir = await mkdtemp(join(tmpdir(), 'hearth-voice-bench-'));
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  HEARTH_DATA_DIR: dataDir,
  HEARTH_TEST_MODE: '1',
  HEARTH_TEST_TOKEN: 'bench',
  HEARTH_LOG_LEVEL: 'warn',
});
const { secrets } = await loadOrCreateSecrets(dataDir, {});
// Every bench member connects from 127.0.0.1, where real listeners come from as many addresses: the per-address
// gateway socket cap (256) would refuse the largest steps' members before the SFU is measured.
const app = await startApp({
  config,
  secrets,
  logger: createLogger(config.logLevel, { format: config.logFormat }),
  gateway: { maxSocketsPerIp: 4096 },
});
process.send?.({ url: app.url, port: app.port });

let inspector: Session | undefined;
// The event loop's delay since the previous `stats` (ms): a server too busy to read its sockets shows here first.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

process.on('message', (message: { cmd?: string; profile?: string }) => {
  if (message.cmd === 'stats') {
    const cpu = process.cpuUsage();
    const loop = { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 };
    loopDelay.reset();
    process.send?.({ cpuMicros: cpu.user + cpu.system, sfu: app.sfu?.stats(), loop });
  } else if (message.cmd === 'profile-start') {
    // A CPU profile of one measurement window (BENCH_VOICE_CPU_PROF): the forwarding, not the join wave.
    inspector = new Session();
    inspector.connect();
    void inspector
      .post('Profiler.enable')
      .then(() => inspector?.post('Profiler.start'))
      .then(() => process.send?.({ profiling: true }));
  } else if (message.cmd === 'profile-stop' && inspector && message.profile) {
    const file = message.profile;
    void inspector
      .post('Profiler.stop')
      .then((result) => writeFile(file, JSON.stringify(result.profile)))
      .then(() => {
        inspector?.disconnect();
        process.send?.({ profiled: file });
      });
  }
});

const stop = async () => {
  await app.close().catch(() => {});
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
