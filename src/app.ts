import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppServices, Secrets } from './app-services.ts';
import type { Config } from './config/config.ts';
import { DeletionSweeper } from './domains/account-lifecycle/deletion-sweeper.ts';
import { AdminApiKeys } from './domains/admin/admin-api-keys.ts';
import { ensureAdminApplication } from './domains/admin/admin-application.ts';
import { AdminKeyCredentials } from './domains/admin/admin-key-credential.ts';
import { AuditLog } from './domains/admin/audit-log.ts';
import { ManualIpBans } from './domains/admin/manual-ip-bans.ts';
import { ApplicationsRepository } from './domains/applications/applications-repository.ts';
import { BotCredentials } from './domains/applications/bot-credential.ts';
import { InteractionKeys } from './domains/applications/interaction-keys.ts';
import { InteractionsEndpoint } from './domains/applications/interactions-endpoint.ts';
import { AttachmentService } from './domains/attachments/attachment-service.ts';
import { IpAuthorization } from './domains/auth/ip-authorization.ts';
import { LegacyTokenDigests } from './domains/auth/legacy-token-digests.ts';
import { OneTimeTokens } from './domains/auth/one-time-tokens.ts';
import { SessionCredentials } from './domains/auth/session-credential.ts';
import { SessionStore } from './domains/auth/session-store.ts';
import { SessionUseBatch } from './domains/auth/session-use.ts';
import { SessionService } from './domains/auth/sessions.ts';
import { CaptchaVerifier } from './domains/captcha/captcha-verifier.ts';
import { createChatModule } from './domains/chat/module.ts';
import { ScheduledMessageDelivery } from './domains/chat/scheduled-messages.ts';
import { ThreadArchiver } from './domains/chat/thread-archiver.ts';
import { AccountEmails } from './domains/email/account-emails.ts';
import { Dispatcher } from './domains/events/dispatch.ts';
import { HarvestService } from './domains/harvest/harvest-service.ts';
import { InstanceSettings } from './domains/instance/instance-settings.ts';
import { createInteractionsModule } from './domains/interactions/module.ts';
import { Janitor } from './domains/maintenance/janitor.ts';
import { UserImages } from './domains/media/user-images.ts';
import { MfaStore } from './domains/mfa/mfa-store.ts';
import { BearerCredentials } from './domains/oauth2/bearer-credential.ts';
import { GrantStore } from './domains/oauth2/grant-store.ts';
import { SigningKeys } from './domains/oauth2/signing-keys.ts';
import { ReportStore } from './domains/reports/report-store.ts';
import { SudoMode } from './domains/sudo/sudo-mode.ts';
import { MfaStatusView } from './domains/users/mfa-status-view.ts';
import { presenceView } from './domains/users/presence-view.ts';
import { UserSettingsStore } from './domains/users/settings.ts';
import { UsersRepository } from './domains/users/users-repository.ts';
import { CallService } from './domains/voice/call-service.ts';
import { sfuNetwork } from './domains/voice/sfu/network-settings.ts';
import { VoiceSignallingServer } from './domains/voice/sfu/signalling-server.ts';
import { VoiceNode } from './domains/voice/sfu/voice-node.ts';
import { VoicePlacement, voiceEndpoint } from './domains/voice/voice-placement.ts';
import { VoiceService } from './domains/voice/voice-service.ts';
import { type GatewayOptions, GatewayServer } from './gateway/gateway-server.ts';
import { authFailureRecorder } from './http/auth/auth-failures.ts';
import { CredentialResolver } from './http/auth/credential-resolver.ts';
import { clientIp } from './http/client-ip.ts';
import { createHttpServer } from './http/server.ts';
import { ShiftableClock } from './platform/clock.ts';
import { passwordHashQueue } from './platform/crypto/passwords.ts';
import { SnowflakeGenerator } from './platform/crypto/snowflake.ts';
import { TokenCheck } from './platform/crypto/token-check.ts';
import type { Database } from './platform/db/database.ts';
import { migrate } from './platform/db/migrate.ts';
import { NodeLease } from './platform/db/node-lease.ts';
import { openConfiguredDatabase } from './platform/db/open-database.ts';
import { openPostgres } from './platform/db/postgres.ts';
import { createLogger, type Logger } from './platform/log.ts';
import { MailDeliveryHealth } from './platform/mail/delivery-health.ts';
import { CapturingMailer, DisabledMailer, Outbox, SmtpMailer } from './platform/mail/mailer.ts';
import { listenForMetrics, Metrics } from './platform/metrics.ts';
import { ipKey as toIpKey } from './platform/net/cidr.ts';
import { PeriodicTask } from './platform/periodic-task.ts';
import { type EventBus, InProcessEventBus } from './platform/state/event-bus.ts';
import { InProcessIpBanStore, type IpBanStore } from './platform/state/ip-bans.ts';
import { InProcessPresenceStore, type PresenceStore } from './platform/state/presences.ts';
import { InProcessRateLimiter, type RateLimiter } from './platform/state/rate-limiter.ts';
import { InProcessSlotStore, type SlotStore } from './platform/state/slots.ts';
import { InProcessVoiceNodeStore, type VoiceNodeStore } from './platform/state/voice-nodes.ts';
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
  /**
   * SFU tuning (tests shorten the time a member's media has to connect, docs/voice.md#join-admission, or widen
   * the window in which a room's member list changes coalesce).
   */
  voice?: { mediaConnectLimitMs?: number; participantsCoalesceMs?: number };
}

export interface RunningApp {
  services: AppServices;
  http: FastifyInstance;
  url: string;
  port: number;
  /** Present when this process serves the `gateway` role. */
  gateway: GatewayServer | undefined;
  /** The embedded voice SFU's signalling endpoint (with the `voice` role). */
  sfu: VoiceSignallingServer | undefined;
  /** This process as a voice node (with the `voice` role; docs/voice.md#the-voice-role). */
  voiceNode: VoiceNode | undefined;
  /** The private metrics port, when HEARTH_METRICS_PORT is set. */
  metricsPort: number | undefined;
  close(): Promise<void>;
}

/** The composition root: picks the concrete database, shared state and mailer, and wires every module. */
export async function startApp(options: StartOptions): Promise<RunningApp> {
  const { config, secrets } = options;
  const log = options.logger ?? createLogger(config.logLevel, { format: config.logFormat });
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
  // Reads that tolerate lag (docs/deployment.md#read-replica); the replica is never migrated or written.
  const replica = config.databaseReplicaUrl ? openPostgres(config.databaseReplicaUrl) : undefined;

  let bus: EventBus = new InProcessEventBus();
  let rateLimiter: RateLimiter = new InProcessRateLimiter();
  let ipBans: IpBanStore = new InProcessIpBanStore();
  let voiceStates: VoiceStateStore = new InProcessVoiceStateStore();
  let voiceNodes: VoiceNodeStore = new InProcessVoiceNodeStore();
  let presences: PresenceStore = new InProcessPresenceStore();
  let slots: SlotStore = new InProcessSlotStore();
  let closeState = async () => {};
  if (config.redisUrl || config.redisClusterNodes.length > 0) {
    // Loaded only when configured: the embedded default never pays for the Redis client at start.
    const { openRedisClusterState, openRedisState } = await import('./platform/state/redis.ts');
    const state = config.redisUrl
      ? await openRedisState(config.redisUrl, config.redisPrefix)
      : await openRedisClusterState(config.redisClusterNodes, config.redisPrefix);
    bus = state.bus;
    rateLimiter = state.rateLimiter;
    ipBans = state.ipBans;
    voiceStates = state.voiceStates;
    voiceNodes = state.voiceNodes;
    presences = state.presences;
    slots = state.slots;
    closeState = state.close;
  }

  const outbox = config.testMode ? new Outbox() : undefined;
  const smtp = config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.smtpFrom) : undefined;
  const mailer = new MailDeliveryHealth(
    outbox ? new CapturingMailer(outbox, () => clock.now(), smtp) : (smtp ?? new DisabledMailer()),
    () => clock.now(),
  );

  const users = new UsersRepository(db);
  const tokenCheck = new TokenCheck(secrets.sudo);
  const legacyTokenDigests = new LegacyTokenDigests(db);
  await legacyTokenDigests.load();
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
    await replica?.close().catch(() => {});
    await db.close().catch(() => {});
    throw error;
  });
  const ids = new SnowflakeGenerator(lease.workerId, () => clock.now());
  const applications = new ApplicationsRepository(db);
  const grants = new GrantStore(db, ids);
  const adminKeys = new AdminApiKeys(ids);
  const sessionUse = new SessionUseBatch(db);
  const sessionStore = new SessionStore(db);
  // One kind per form of the Authorization header (docs/architecture.md#credential-kinds).
  const credentials = new CredentialResolver(
    {
      session: new SessionCredentials(sessionStore, tokenCheck, legacyTokenDigests, sessionUse),
      bot: new BotCredentials(applications, tokenCheck, legacyTokenDigests),
      bearer: new BearerCredentials(grants),
      admin: new AdminKeyCredentials(db, adminKeys),
    },
    users,
    bus,
    clock,
  );
  await ensureAdminApplication({ db, ids, config, now: clock.now() });
  if (await settings.sealPlainSecret()) log.info('sealed the plain-text SSO client secret');
  await settings.reload();
  const manualIpBans = new ManualIpBans(db, bus);
  await manualIpBans.reload();
  const mfa = new MfaStore(db, { clock, ids, config, secret: secrets.mfa });
  const sealedTotp = await mfa.totp.sealPlainSecrets();
  if (sealedTotp > 0) log.info('sealed plain-text TOTP secrets', { count: sealedTotp });
  const objects = await openObjectStore(config, join(dataDir, 'objects'), log);

  const attachments = new AttachmentService({
    db,
    objects,
    ids,
    clock,
    relaySecret: secrets.relay,
    mediaBase: () => `${config.publicUrl}/media`,
  });
  const interactionKeys = new InteractionKeys(db, secrets.mfa);
  const interactionsEndpoint = new InteractionsEndpoint(interactionKeys, {
    allowLoopback: config.testMode,
    perApplication: config.interactionsEndpointConcurrency,
  });
  const dispatcher = new Dispatcher(bus);
  const metrics = new Metrics();
  metrics.gauge('hearth_argon2_hashes', 'Password hashes running and waiting for a slot', passwordHashQueue, 'state');
  const poolStats = db.poolStats?.bind(db);
  if (poolStats)
    metrics.gauge(
      'hearth_db_pool_connections',
      'PostgreSQL pool connections: total, idle, waiting',
      poolStats,
      'state',
    );
  const chat = createChatModule({ db, users, bus, dispatcher, ids, clock });

  const emails = new AccountEmails(mailer, config.webappUrl, clock, log);
  const sessions = new SessionService(sessionStore, ids, clock, credentials, bus, tokenCheck, sessionUse);
  const tokens = new OneTimeTokens(db, clock);
  // Set below when this process is a voice node: placement counts it live whatever the shared store says.
  let voiceNode: VoiceNode | undefined;
  const placement = new VoicePlacement({
    nodes: voiceNodes,
    store: voiceStates,
    bus,
    clock,
    config,
    log,
    localNode: () => voiceNode?.current(),
  });
  const services = {
    config,
    readReplica: replica ?? db,
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
    sessions,
    tokenCheck,
    legacyTokenDigests,
    tokens,
    emails,
    objects,
    media: new UserImages(objects),
    dispatcher,
    botInstaller: chat.botInstaller,
    chat: chat.readModel,
    chatCore: chat,
    userSettings: new UserSettingsStore(db),
    interactionKeys,
    interactionsEndpoint,
    interactions: createInteractionsModule({
      db,
      chat,
      apps: applications,
      users,
      dispatcher,
      ids,
      clock,
      endpoint: interactionsEndpoint,
      attachments,
      log,
      objects,
      limiter: rateLimiter,
    }),
    attachments,
    messages: chat.messages,
    presences,
    slots,
    metrics,
    voice: new VoiceService({ store: voiceStates, chat, dispatcher, bus, clock, log, placement }),
    voiceNodes,
    calls: new CallService({ store: voiceStates, chat, dispatcher, clock, config, ids, placement }),
    // Test mode sweeps often; automatic sweeps skip while the test clock runs ahead (see Janitor).
    janitor: new Janitor({ db, clock, objects, log }, { intervalMs: config.testMode ? 1000 : 60_000 }),
    harvests: new HarvestService(
      {
        db,
        clock,
        ids,
        objects,
        emails,
        log,
        publicUrl: () => config.publicUrl,
        linkSecret: secrets.relay,
      },
      { intervalMs: config.testMode ? 1000 : 30_000 },
    ),
    ipAuthorization: new IpAuthorization({ config, db, clock, emails, sessions, tokens }),
    applications,
    audit: new AuditLog(ids),
    adminKeys,
    // One per process: it caches the current ID-token signing key.
    signingKeys: new SigningKeys(db, secrets.mfa),
    grants,
    reports: new ReportStore(),
  } satisfies AppServices as AppServices;

  // Guild payloads (READY, GUILD_CREATE) list who is in voice, in Discord's shape without `guild_id`.
  chat.store.voiceStatesOf = async (guildId) =>
    (await services.voice.statesOf(guildId)).map(({ guild_id: _, ...state }) => state);
  // Guild payloads, invites and `with_counts` show who is online among the members (ids from the read model's
  // in-memory member map: no query per READY).
  chat.store.presencesOf = async (guildId) => {
    const found = await presences.getMany(await chat.readModel.memberIds(guildId), Date.now());
    return [...found].map(([userId, presence]) => presenceView(userId, presence));
  };
  // `@here` counts as a mention only for the members online when it is sent.
  chat.store.onlineAmong = async (userIds) => new Set((await presences.getMany(userIds, Date.now())).keys());
  const routes = buildRoutes(services);
  const http = createHttpServer(services, routes);
  // The web client comes with the API (docs/deployment.md#roles).
  if (config.roles.has('api')) registerWebClient(http, { config, log });
  const gateway = config.roles.has('gateway')
    ? new GatewayServer(services, { ...options.gateway, voiceServedHere: config.roles.has('voice') })
    : undefined;
  gateway?.attach(http.server);
  // The SFU and its signalling socket come with the `voice` role (docs/deployment.md#roles).
  const sfu = config.roles.has('voice')
    ? new VoiceSignallingServer({
        store: voiceStates,
        bus,
        clock,
        log,
        network: sfuNetwork(config),
        onActive: (guildId, userId) => {
          services.voice
            .markActive(guildId, userId)
            .catch((error) => log.error('voice activity failed', { error: (error as Error).message }));
        },
        // A banned address is refused here too, as at the Gateway.
        admit: async (request) => {
          const ip = clientIp(request.socket.remoteAddress, request.headers['x-forwarded-for'], config.trustedProxies);
          return !(await services.banCheck(ip, toIpKey(ip), clock.now()));
        },
        // A member whose media never connected leaves the voice channel, as at a leave (docs/voice.md#join-admission).
        onMediaFailed: ({ guildId, channelId, userId, sessionId }) => {
          const left =
            guildId === null
              ? services.calls.leave(channelId, userId, sessionId)
              : services.voice.leaveFailedMedia(guildId, channelId, userId, sessionId);
          left.catch((error) =>
            log.error('voice leave after failed media failed', { error: (error as Error).message }),
          );
        },
        ...(options.voice?.mediaConnectLimitMs ? { mediaConnectLimitMs: options.voice.mediaConnectLimitMs } : {}),
        ...(options.voice?.participantsCoalesceMs
          ? { participantsCoalesceMs: options.voice.participantsCoalesceMs }
          : {}),
      })
    : undefined;
  sfu?.attach(http.server, { alone: !gateway });
  if (sfu)
    voiceNode = new VoiceNode({
      nodes: voiceNodes,
      endpoint: () => config.voiceEndpoint ?? voiceEndpoint(config),
      ttlMs: config.voiceNodeTtlSeconds * 1000,
      load: () => {
        const { rooms, participants } = sfu.stats();
        return { rooms, participants };
      },
      rooms: () => sfu.roomKeys(),
      evict: (roomKey) => sfu.evict(roomKey),
      log,
    });
  // Finalises self-deletions whose grace period ended; test mode sweeps often (36 s grace).
  const deletionSweeper = new DeletionSweeper(services, config.testMode ? 500 : 60_000);
  deletionSweeper.start();
  services.janitor.start();
  // Data exports queued before a restart are built again (docs/accounts.md#your-data-data-export).
  services.harvests.start();
  // Idle threads archive themselves; test mode checks every second so a shifted clock takes effect at once.
  const threadArchiver = new ThreadArchiver(chat.threads, log, config.testMode ? 1000 : 60_000);
  threadArchiver.start();
  // Scheduled messages are posted within this interval of their time (docs/chat.md#scheduled-messages).
  const scheduledDelivery = new ScheduledMessageDelivery(
    { scheduled: chat.scheduled, store: chat.store, access: chat.access, messages: chat.messages, ids, clock, log },
    config.testMode ? 250 : 5000,
  );
  scheduledDelivery.start();
  // Idle voice members move to their guild's AFK channel; every process may sweep (each check is taken by one).
  const afkSweeper = new PeriodicTask({
    intervalMs: config.testMode ? 500 : 10_000,
    run: async () => {
      const moved = await services.voice.sweepAfk();
      if (moved > 0) log.info('voice members moved to AFK', { moved });
    },
    onError: (error) => log.error('voice AFK sweep failed', { error: (error as Error).message }),
  });
  afkSweeper.start();
  // DM calls stop ringing the unanswering after the ringing timeout (docs/voice.md#ringing-timeout).
  const ringSweeper = new PeriodicTask({
    intervalMs: config.testMode ? 200 : 2_000,
    run: async () => {
      await services.calls.sweepRinging();
    },
    onError: (error) => log.error('call ringing sweep failed', { error: (error as Error).message }),
  });
  ringSweeper.start();
  // Rooms of voice nodes that stopped announcing themselves move to live ones (docs/voice.md#failover).
  const voiceRoomSweeper = new PeriodicTask({
    intervalMs: config.testMode ? 500 : 2_000,
    run: async () => {
      await placement.sweep();
    },
    onError: (error) => log.error('voice room sweep failed', { error: (error as Error).message }),
  });
  voiceRoomSweeper.start();
  // Each change reloads both at once everywhere; this catches a change whose bus message never arrived.
  const settingsReloader = new PeriodicTask({
    intervalMs: config.settingsReloadSeconds * 1000,
    run: async () => {
      await Promise.all([settings.reload(), manualIpBans.reload()]);
    },
    onError: (error) => log.error('settings reload failed', { error: (error as Error).message }),
  });
  settingsReloader.start();

  await http.listen({ port: config.port, host: config.host });
  const address = http.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('listening', {
    port,
    storage: db.kind,
    shared_state: config.redisUrl ? 'redis' : config.redisClusterNodes.length > 0 ? 'redis-cluster' : 'in-process',
  });
  const metricsListener =
    config.metricsPort !== undefined
      ? await listenForMetrics(metrics, config.metricsPort, config.metricsHost)
      : undefined;
  if (metricsListener) log.info('metrics listening', { port: metricsListener.port, host: config.metricsHost });
  await voiceNode?.start();

  return {
    services,
    http,
    port,
    url: `http://127.0.0.1:${port}`,
    gateway,
    sfu,
    voiceNode,
    metricsPort: metricsListener?.port,
    async close() {
      await metricsListener?.close();
      await deletionSweeper.stop();
      await services.janitor.stop();
      await services.harvests.stop();
      await threadArchiver.stop();
      await scheduledDelivery.stop();
      await afkSweeper.stop();
      await ringSweeper.stop();
      await voiceRoomSweeper.stop();
      await voiceNode?.stop();
      await settingsReloader.stop();
      await gateway?.drain();
      await sfu?.close();
      await closeHttp(http);
      // Interactions still being delivered to endpoints fail now rather than outlive the database.
      interactionsEndpoint.close();
      await services.interactions.service.settled();
      await sessionUse.close();
      await closeState();
      await lease.release().catch(() => {});
      await replica?.close();
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
