import type { Config } from './config/config.ts';
import type { AdminApiKeys } from './domains/admin/admin-api-keys.ts';
import type { AuditLog } from './domains/admin/audit-log.ts';
import type { ManualIpBans } from './domains/admin/manual-ip-bans.ts';
import type { ApplicationsRepository } from './domains/applications/applications-repository.ts';
import type { InteractionKeys } from './domains/applications/interaction-keys.ts';
import type { InteractionsEndpoint } from './domains/applications/interactions-endpoint.ts';
import type { AttachmentService } from './domains/attachments/attachment-service.ts';
import type { IpAuthorization } from './domains/auth/ip-authorization.ts';
import type { LegacyTokenDigests } from './domains/auth/legacy-token-digests.ts';
import type { OneTimeTokens } from './domains/auth/one-time-tokens.ts';
import type { SessionService } from './domains/auth/sessions.ts';
import type { CaptchaVerifier } from './domains/captcha/captcha-verifier.ts';
import type { ChatReadModel } from './domains/chat/chat-read-model.ts';
import type { MessageService } from './domains/chat/message-service.ts';
import type { ChatModule } from './domains/chat/module.ts';
import type { AccountEmails } from './domains/email/account-emails.ts';
import type { BotInstaller } from './domains/events/bot-installer.ts';
import type { Dispatcher } from './domains/events/dispatch.ts';
import type { HarvestService } from './domains/harvest/harvest-service.ts';
import type { InstanceSettings } from './domains/instance/instance-settings.ts';
import type { InteractionsModule } from './domains/interactions/module.ts';
import type { Janitor } from './domains/maintenance/janitor.ts';
import type { UserImages } from './domains/media/user-images.ts';
import type { MfaStore } from './domains/mfa/mfa-store.ts';
import type { GrantStore } from './domains/oauth2/grant-store.ts';
import type { SigningKeys } from './domains/oauth2/signing-keys.ts';
import type { ReportStore } from './domains/reports/report-store.ts';
import type { SudoMode } from './domains/sudo/sudo-mode.ts';
import type { MfaStatusView } from './domains/users/mfa-status-view.ts';
import type { UserSettingsStore } from './domains/users/settings.ts';
import type { UsersRepository } from './domains/users/users-repository.ts';
import type { CallService } from './domains/voice/call-service.ts';
import type { VoiceService } from './domains/voice/voice-service.ts';
import type { CredentialResolver } from './http/auth/credential-resolver.ts';
import type { ShiftableClock } from './platform/clock.ts';
import type { SnowflakeGenerator } from './platform/crypto/snowflake.ts';
import type { TokenCheck } from './platform/crypto/token-check.ts';
import type { Database, Queryable } from './platform/db/database.ts';
import type { Logger } from './platform/log.ts';
import type { MailDeliveryHealth } from './platform/mail/delivery-health.ts';
import type { Outbox } from './platform/mail/mailer.ts';
import type { Metrics } from './platform/metrics.ts';
import type { Secrets } from './platform/secrets.ts';
import type { EventBus } from './platform/state/event-bus.ts';
import type { IpBan, IpBanStore } from './platform/state/ip-bans.ts';
import type { PresenceStore } from './platform/state/presences.ts';
import type { RateLimiter } from './platform/state/rate-limiter.ts';
import type { SlotStore } from './platform/state/slots.ts';
import type { VoiceNodeStore } from './platform/state/voice-nodes.ts';
import type { ObjectStore } from './platform/storage/object-store.ts';

/** Signing and sealing keys (`platform/secrets.ts`); `mfa` keys TOTP secrets at rest: losing it disables them. */
export type { Secrets };

/**
 * Everything the composition root builds once at start-up. Only the root (`app.ts`) and the route table
 * (`routes.ts`) see the whole of it: each domain's route factory takes its own narrow `XDeps` (a `Pick` of
 * the members it uses; docs/architecture.md#narrow-dependencies). Nothing here is built per request.
 */
export interface AppServices {
  config: Config;
  secrets: Secrets;
  clock: ShiftableClock;
  log: Logger;
  db: Database;
  /**
   * Where reads that tolerate replication lag go (message search): the replica of DATABASE_REPLICA_URL, else
   * the primary (docs/deployment.md#read-replica). Never written to.
   */
  readReplica: Queryable;
  ids: SnowflakeGenerator;
  bus: EventBus;
  rateLimiter: RateLimiter;
  ipBans: IpBanStore;
  /** Automatic bans from the shared store, then manual bans (which may be CIDR ranges). */
  banCheck(ip: string, ipKey: string, now: number): IpBan | undefined | Promise<IpBan | undefined>;
  /** Durable bans set through the Admin API (addresses and CIDR ranges), held in memory. */
  manualIpBans: ManualIpBans;
  /**
   * Counts a failed authentication for the IP-ban trigger (`authFailureRecorder`). Pass the request's
   * `ctx.request.hearth.strict`: in test mode only strict requests count (unknown = not strict there).
   */
  recordAuthFailure(ip: string, strict: boolean): Promise<void>;
  /** Every email goes out through it; it remembers whether delivery is failing (docs/deployment.md#email-delivery). */
  mailer: MailDeliveryHealth;
  outbox: Outbox | undefined;
  users: UsersRepository;
  credentials: CredentialResolver;
  /** Mints session and bot tokens with their keyed check part (docs/accounts.md). */
  tokenCheck: TokenCheck;
  /** Session and bot tokens from before check parts, read at start (docs/accounts.md#token-check). */
  legacyTokenDigests: LegacyTokenDigests;
  settings: InstanceSettings;
  /** Second factors; other modules use its `MfaFactors` face (status, verify, removeAllFactors). */
  mfa: MfaStore;
  /** Cached MFA status for user views only (never for login or sudo decisions). */
  mfaView: MfaStatusView;
  sudo: SudoMode;
  /** Checks `X-Captcha-Token` on the routes marked `captcha` (the HTTP pipeline calls it). */
  captcha: CaptchaVerifier;
  sessions: SessionService;
  tokens: OneTimeTokens;
  emails: AccountEmails;
  objects: ObjectStore;
  media: UserImages;
  dispatcher: Dispatcher;
  botInstaller: BotInstaller;
  /** The chat core's read port for the gateway (membership, guild payloads, channel visibility). */
  chat: ChatReadModel;
  /** Message creation shared by the chat routes, webhook execution and the test harness. */
  messages: MessageService;
  /** The whole chat core (access checks, store, events) for modules built on it: webhooks, attachments. */
  chatCore: ChatModule;
  /** Per-user settings and notes (docs/accounts.md). */
  userSettings: UserSettingsStore;
  /** Application commands and interactions (docs/bots.md). */
  interactions: InteractionsModule;
  /** Applications' Ed25519 key pairs (`verify_key`), made when missing; private keys sealed at rest. */
  interactionKeys: InteractionKeys;
  /** Signed requests to applications' interactions endpoint URLs, and their verification (docs/bots.md). */
  interactionsEndpoint: InteractionsEndpoint;
  attachments: AttachmentService;
  /** Prometheus metrics of this process (docs/deployment.md). */
  metrics: Metrics;
  /** Who is online: each gateway session's presence, aggregated per user (docs/gateway.md, "Presence"). */
  presences: PresenceStore;
  /** Gateway sockets per address and sessions per account, counted across processes (docs/gateway.md#across-nodes). */
  slots: SlotStore;
  /** Voice states, their permissions and the media tokens of VOICE_SERVER_UPDATE (docs/voice.md). */
  voice: VoiceService;
  /** Announced voice nodes and the node of each room (docs/voice.md#room-placement). */
  voiceNodes: VoiceNodeStore;
  /** DM and group-DM calls: ringing, CALL_CREATE/UPDATE/DELETE, the call message (docs/voice.md). */
  calls: CallService;
  /** Deletes expired tokens, codes, MFA attempts and abandoned uploads (with their bytes) periodically. */
  janitor: Janitor;
  /** Data exports: requests, the background builder and the one-time download (docs/accounts.md#your-data-data-export). */
  harvests: HarvestService;
  /** Held sign-ins from new addresses and their emailed links (docs/accounts.md). */
  ipAuthorization: IpAuthorization;
  /** Applications (bots, OAuth2 clients) and their secrets' digests. */
  applications: ApplicationsRepository;
  /** The Admin API's audit log (admin routes and report moderation write to it). */
  audit: AuditLog;
  /** Admin API keys (docs/admin.md). */
  adminKeys: AdminApiKeys;
  /** The OAuth2 provider's ID-token signing keys, private keys sealed at rest (docs/oauth2.md). */
  signingKeys: SigningKeys;
  /** OAuth2 grants, codes and tokens (docs/oauth2.md). */
  grants: GrantStore;
  /** User reports and their moderation. */
  reports: ReportStore;
}
