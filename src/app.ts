import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppServices, Secrets } from './app-services.ts';
import type { Config } from './config/config.ts';
import { DeletionSweeper } from './domains/account-lifecycle/deletion-sweeper.ts';
import { ensureAdminApplication } from './domains/admin/admin-application.ts';
import { ManualIpBans } from './domains/admin/manual-ip-bans.ts';
import { ApplicationsRepository } from './domains/applications/applications-repository.ts';
import { AttachmentService } from './domains/attachments/attachment-service.ts';
import { OneTimeTokens } from './domains/auth/one-time-tokens.ts';
import { SessionService } from './domains/auth/sessions.ts';
import { CaptchaVerifier } from './domains/captcha/captcha-verifier.ts';
import { createChatModule } from './domains/chat/module.ts';
import { ThreadArchiver } from './domains/chat/thread-archiver.ts';
import { AccountEmails } from './domains/email/account-emails.ts';
import { Dispatcher } from './domains/events/dispatch.ts';
import { InstanceSettings } from './domains/instance/instance-settings.ts';
import { createInteractionsModule } from './domains/interactions/module.ts';
import { Janitor } from './domains/maintenance/janitor.ts';
import { UserImages } from './domains/media/user-images.ts';
import { MfaStore } from './domains/mfa/mfa-store.ts';
import { SudoMode } from './domains/sudo/sudo-mode.ts';
import { MfaStatusView } from './domains/users/mfa-status-view.ts';
import { UserSettingsStore } from './domains/users/settings.ts';
import { UsersRepository } from './domains/users/users-repository.ts';
import { sfuNetwork } from './domains/voice/sfu/network-settings.ts';
import { VoiceSignallingServer } from './domains/voice/sfu/signalling-server.ts';
import { VoiceService } from './domains/voice/voice-service.ts';
import { type GatewayOptions, GatewayServer } from './gateway/gateway-server.ts';
import { authFailureRecorder } from './http/auth/auth-failures.ts';
import { CredentialResolver } from './http/auth/credential-resolver.ts';
import { clientIp } from './http/client-ip.ts';
import { createHttpServer } from './http/server.ts';
import { ShiftableClock } from './platform/clock.ts';
import { SnowflakeGenerator } from './platform/crypto/snowflake.ts';
import { TokenCheck } from './platform/crypto/token-check.ts';
import type { Database } from './platform/db/database.ts';
import { migrate } from './platform/db/migrate.ts';
import { NodeLease } from './platform/db/node-lease.ts';
import { openConfiguredDatabase } from './platform/db/open-database.ts';
import { createLogger, type Logger } from './platform/log.ts';
import { CapturingMailer, DisabledMailer, type Mailer, Outbox, SmtpMailer } from './platform/mail/mailer.ts';
import { ipKey as toIpKey } from './platform/net/cidr.ts';
import { type EventBus, InProcessEventBus } from './platform/state/event-bus.ts';
import { InProcessIpBanStore, type IpBanStore } from './platform/state/ip-bans.ts';
import { InProcessRateLimiter, type RateLimiter } from './platform/state/rate-limiter.ts';
import { openRedisState } from './platform/state/redis.ts';
import { InProcessVoiceStateStore, type VoiceStateStore } from './platform/state/voice-states.ts';
import { openObjectStore } from './platform/storage/open-object-store.ts';
import { buildRoutes } from './routes.ts';
import { registerWebClient } from './web/web-client.ts';

export interface StartOptions {
  config: Config;
  secrets: Secrets;
  logger?: Logger;
  /** Use this database instead of opening one from the configuration (tests hand in a template copy). */
  database?: Database;
  /** Gateway tuning (tests shorten the heartbeat timers); defaults are the protocol's. */
  gateway?: GatewayOptions;
}

export interface RunningApp {
  services: AppServices;
  http: FastifyInstance;
  url: string;
  port: number;
  /** Present when this process serves the `gateway` role. */
  gateway: GatewayServer | undefined;
  /** The embedded voice SFU's signalling endpoint (with the gateway role). */
  sfu: VoiceSignallingServer | undefined;
  close(): Promise<void>;
}

/** The composition root: picks the concrete database, shared state and mailer, and wires every module. */
export async function startApp(options: StartOptions): Promise<RunningApp> {
  const { config, secrets } = options;
  const log = options.logger ?? createLogger(config.logLevel);
  const clock = new ShiftableClock();
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });

  const opening = performance.now();
  const db = options.database ?? (await openConfiguredDatabase(config));
  const applied = await migrate(db);
  log.info('database ready', {
    storage: db.kind,
    migrations_applied: applied.length,
    ms: Math.round(performance.now() - opening),
  });

  let bus: EventBus = new InProcessEventBus();
  let rateLimiter: RateLimiter = new InProcessRateLimiter();
  let ipBans: IpBanStore = new InProcessIpBanStore();
  let voiceStates: VoiceStateStore = new InProcessVoiceStateStore();
  let closeState = async () => {};
  if (config.redisUrl) {
    const state = await openRedisState(config.redisUrl, config.redisPrefix);
    bus = state.bus;
    rateLimiter = state.rateLimiter;
    ipBans = state.ipBans;
    voiceStates = state.voiceStates;
    closeState = state.close;
  }

  const outbox = config.testMode ? new Outbox() : undefined;
  const smtp: Mailer | undefined = config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.smtpFrom) : undefined;
  const mailer: Mailer = outbox ? new CapturingMailer(outbox, () => clock.now(), smtp) : (smtp ?? new DisabledMailer());

  const users = new UsersRepository(db);
  const tokenCheck = new TokenCheck(secrets.sudo);
  const credentials = new CredentialResolver(db, users, bus, clock, tokenCheck);
  await credentials.loadLegacyDigests();
  const settings = new InstanceSettings(db, bus, secrets.mfa);
  const lease = await NodeLease.acquire(db, {
    preferredWorkerId: config.workerId,
    objectStore: config.s3Bucket ? `s3:${config.s3Bucket}` : `local:${join(dataDir, 'objects')}`,
    sharedObjectDir: config.sharedObjectDir,
    log,
    onLost: () => {
      // Ids minted now could collide with the process that took the worker id: stop rather than corrupt.
      log.error('the worker-id lease was lost (this process stalled past its expiry); exiting');
      process.exit(70);
    },
  }).catch(async (error: unknown) => {
    // Refused to start: what was opened so far must not keep the process alive.
    await closeState().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  });
  const ids = new SnowflakeGenerator(lease.workerId, () => clock.now());
  await ensureAdminApplication({ db, ids, config, now: clock.now() });
  if (await settings.sealPlainSecret()) log.info('sealed the plain-text SSO client secret');
  await settings.reload();
  const manualIpBans = new ManualIpBans(db, bus);
  await manualIpBans.reload();
  const mfa = new MfaStore(db, { clock, ids, config, secret: secrets.mfa });
  const sealedTotp = await mfa.totp.sealPlainSecrets();
  if (sealedTotp > 0) log.info('sealed plain-text TOTP secrets', { count: sealedTotp });
  const objects = await openObjectStore(config, join(dataDir, 'objects'), log);

  const dispatcher = new Dispatcher(bus);
  const chat = createChatModule({ db, users, bus, dispatcher, ids, clock });

  const services = {
    config,
    secrets,
    clock,
    log,
    db,
    ids,
    bus,
    rateLimiter,
    ipBans,
    banCheck: (ip: string, ipKey: string, now: number) => {
      const automatic = ipBans.find(ipKey, now);
      return automatic instanceof Promise
        ? automatic.then((ban) => ban ?? manualIpBans.find(ip, now))
        : (automatic ?? manualIpBans.find(ip, now));
    },
    manualIpBans,
    recordAuthFailure: authFailureRecorder(config, ipBans, clock),
    mailer,
    outbox,
    users,
    credentials,
    settings,
    mfa,
    mfaView: new MfaStatusView(mfa, bus),
    sudo: new SudoMode({ secret: secrets.sudo, mfa, now: () => clock.now() }),
    captcha: new CaptchaVerifier({
      provider: config.captchaProvider,
      secret: config.captchaSecret,
      verifyUrl: config.captchaVerifyUrl,
      timeoutMs: config.captchaTimeoutMs,
      log,
    }),
    sessions: new SessionService(db, ids, clock, credentials, bus, tokenCheck),
    tokenCheck,
    tokens: new OneTimeTokens(db, clock),
    emails: new AccountEmails(mailer, config.webappUrl, clock, log),
    objects,
    media: new UserImages(objects),
    dispatcher,
    botInstaller: chat.botInstaller,
    chat: chat.readModel,
    chatCore: chat,
    userSettings: new UserSettingsStore(db),
    interactions: createInteractionsModule({
      db,
      chat,
      apps: new ApplicationsRepository(db),
      users,
      dispatcher,
      ids,
      clock,
    }),
    attachments: new AttachmentService({
      db,
      objects,
      ids,
      clock,
      relaySecret: secrets.relay,
      mediaBase: () => `${config.publicUrl}/media`,
    }),
    messages: chat.messages,
    voice: new VoiceService({ store: voiceStates, chat, dispatcher, bus, clock, config, log }),
    // Test mode sweeps often; automatic sweeps skip while the test clock runs ahead (see Janitor).
    janitor: new Janitor({ db, clock, objects, log }, { intervalMs: config.testMode ? 1000 : 60_000 }),
  } satisfies AppServices as AppServices;

  // Guild payloads (READY, GUILD_CREATE) list who is in voice, in Discord's shape without `guild_id`.
  chat.store.voiceStatesOf = async (guildId) =>
    (await services.voice.statesOf(guildId)).map(({ guild_id: _, ...state }) => state);
  const routes = buildRoutes(services);
  const http = createHttpServer(services, routes);
  registerWebClient(http, { config, log });
  const gateway = config.roles.has('gateway') ? new GatewayServer(services, options.gateway) : undefined;
  gateway?.attach(http.server);
  const sfu = gateway
    ? new VoiceSignallingServer({
        store: voiceStates,
        bus,
        clock,
        log,
        network: sfuNetwork(config),
        // A banned address is refused here too, as at the Gateway.
        admit: async (request) => {
          const ip = clientIp(request.socket.remoteAddress, request.headers['x-forwarded-for'], config.trustedProxies);
          return !(await services.banCheck(ip, toIpKey(ip), clock.now()));
        },
      })
    : undefined;
  sfu?.attach(http.server);
  // Finalises self-deletions whose grace period ended; test mode sweeps often (36 s grace).
  const deletionSweeper = new DeletionSweeper(services, config.testMode ? 500 : 60_000);
  deletionSweeper.start();
  services.janitor.start();
  // Idle threads archive themselves; test mode checks every second so a shifted clock takes effect at once.
  const threadArchiver = new ThreadArchiver(chat.threads, log, config.testMode ? 1000 : 60_000);
  threadArchiver.start();

  await http.listen({ port: config.port, host: config.host });
  const address = http.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('listening', { port, storage: db.kind, shared_state: config.redisUrl ? 'redis' : 'in-process' });

  return {
    services,
    http,
    port,
    url: `http://127.0.0.1:${port}`,
    gateway,
    sfu,
    async close() {
      await deletionSweeper.stop();
      await services.janitor.stop();
      await threadArchiver.stop();
      await gateway?.drain();
      await sfu?.close();
      await closeHttp(http);
      await credentials.close();
      await closeState();
      await lease.release().catch(() => {});
      await db.close();
    },
  };
}

/** How long requests in flight may finish at shutdown before their connections are cut. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Stops accepting, closes idle keep-alive sockets at once, lets requests in flight finish, and after the grace
 * period cuts what is left (a client trickling a body would otherwise hold shutdown forever).
 */
async function closeHttp(http: FastifyInstance): Promise<void> {
  const closing = http.close();
  http.server.closeIdleConnections();
  const cut = setTimeout(() => http.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  cut.unref();
  try {
    await closing;
  } finally {
    clearTimeout(cut);
  }
}
