import type { AppServices } from '../../app-services.ts';
import type { Config } from '../../config/config.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, REPLY_SENT, route } from '../../http/route.ts';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import type { DeliveryStatus } from '../../platform/mail/delivery-health.ts';
import { type CaptchaView, captchaView } from '../captcha/captcha-view.ts';
import { MAX_GUILDS_PER_USER } from '../chat/guilds.ts';
import { MAX_CONTENT_LENGTH } from '../chat/message-body.ts';
import type { InstanceSettings } from '../instance/instance-settings.ts';
import { type SsoStatusView, ssoStatus } from './sso-status.ts';
import { gatewayUrl } from './urls.ts';

/** A limit rule of the discovery document's `limits`: the overrides of the defaults, by name. */
type LimitRule = { id: string; overrides: Record<LimitName, number> };
type LimitName =
  | 'max_message_length'
  | 'max_attachments_per_message'
  | 'max_attachment_file_size'
  | 'max_guilds'
  | 'max_guild_channels'
  | 'max_guild_roles'
  | 'max_webhooks_per_channel'
  | 'max_group_dm_recipients'
  | 'max_bio_length';

/** `GET /.well-known/service` (`discoveryDocument`): where everything is and what this instance offers. */
export type DiscoveryDocument = {
  api_code_version: 1;
  endpoints: {
    api: string;
    api_client: string;
    api_public: string;
    gateway: string;
    media: string;
    static_cdn: string;
    admin: string;
    invite: string;
    gift: string;
    webapp: string;
    marketing: string;
  };
  captcha: CaptchaView;
  features: {
    voice_enabled: boolean;
    stripe_enabled: boolean;
    self_hosted: boolean;
    presigned_attachment_uploads: boolean;
    emails_enabled: boolean;
    email_delivery: DeliveryStatus;
  };
  sso: SsoStatusView;
  registration: { mode: 'open' | 'approval' | 'closed'; admin_registration_urls_enabled: boolean };
  limits: { version: 2; traitDefinitions: []; rules: LimitRule[]; defaultsHash: string };
  app_public: {
    branding: { product_name: string };
    setup: { configured: boolean; admin_url: string };
    legal: { terms_url: string | null; privacy_url: string | null };
    registration: { collect_date_of_birth: boolean };
  };
  community: { single_community: boolean; single_community_guild_id: string | null; direct_messages_disabled: boolean };
  gif: { provider: string; display_name: string; attribution_required: boolean };
  services: { voice: boolean; push: boolean; search: boolean; billing: boolean };
  push: { public_vapid_key: string | null };
};

/** The discovery document (docs/conventions.md#discovery-and-cors). Every value comes from configuration, never from the request. */
export function discoveryDocument(
  config: Config,
  settings: InstanceSettings,
  emailsEnabled: boolean,
  emailDelivery: DeliveryStatus = emailsEnabled ? 'ok' : 'disabled',
): DiscoveryDocument {
  const base = config.publicUrl;
  const origin = new URL(config.webappUrl).origin;
  const sso = ssoStatus(config, settings);
  return {
    api_code_version: 1,
    endpoints: {
      api: base,
      api_client: base,
      api_public: base,
      gateway: gatewayUrl(config),
      media: `${base}/media`,
      static_cdn: `${base}/static`,
      admin: `${base}/admin`,
      invite: `${base}/invite`,
      gift: `${base}/gift`,
      webapp: origin,
      marketing: origin,
    },
    captcha: captchaView(config),
    features: {
      voice_enabled: true,
      stripe_enabled: false,
      self_hosted: true,
      presigned_attachment_uploads: true,
      emails_enabled: emailsEnabled,
      // `failing` while this server cannot hand email to its SMTP server: clients say so instead of "check
      // your email" (docs/deployment.md#email-delivery).
      email_delivery: emailDelivery,
    },
    sso,
    registration: { mode: settings.get().registration.mode, admin_registration_urls_enabled: false },
    limits: {
      version: 2,
      traitDefinitions: [],
      rules: [
        {
          id: 'default',
          overrides: {
            max_message_length: MAX_CONTENT_LENGTH,
            max_attachments_per_message: 10,
            max_attachment_file_size: 25 * 1024 * 1024,
            max_guilds: MAX_GUILDS_PER_USER,
            max_guild_channels: 500,
            max_guild_roles: 250,
            max_webhooks_per_channel: 15,
            max_group_dm_recipients: 10,
            max_bio_length: 320,
          },
        },
      ],
      defaultsHash: 'hearth-limits-v1',
    },
    app_public: {
      branding: { product_name: 'Hearth' },
      setup: { configured: true, admin_url: `${base}/admin` },
      legal: { terms_url: null, privacy_url: null },
      registration: { collect_date_of_birth: false },
    },
    community: { single_community: false, single_community_guild_id: null, direct_messages_disabled: false },
    gif: { provider: 'none', display_name: '', attribution_required: false },
    services: { voice: true, push: false, search: false, billing: false },
    push: { public_vapid_key: null },
  };
}

/** What `discoveryRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type DiscoveryRoutesDeps = Pick<
  AppServices,
  'clock' | 'config' | 'db' | 'emails' | 'mailer' | 'metrics' | 'objects' | 'rateLimiter' | 'readReplica' | 'settings'
>;

export function discoveryRoutes(services: DiscoveryRoutesDeps): AnyRoute[] {
  const { config, settings, emails } = services;

  /** One readiness probe: `ok`, or `failed` when it throws or takes longer than 2 s (no detail leaves). */
  async function probe(check: () => Promise<unknown>): Promise<'ok' | 'failed'> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), 2_000);
    });
    try {
      await Promise.race([check(), timeout]);
      return 'ok';
    } catch {
      return 'failed';
    } finally {
      clearTimeout(timer);
    }
  }
  return [
    route({
      method: 'GET',
      path: '/.well-known/service',
      root: true,
      policy: 'none',
      rateLimit: { bucket: 'discovery', limit: 60, windowSeconds: 60 },
      handler: () => discoveryDocument(config, settings, emails.enabled, services.mailer.status()),
    }),
    route({
      method: 'GET',
      path: '/_health',
      policy: 'credential-free',
      alsoAtRoot: true,
      handler: () => ({ status: 'ok' }),
    }),
    // Readiness (docs/deployment.md): `/_health` stays a liveness check that touches nothing; this one asks
    // the database, the shared state (Redis when configured) and the object store, each within 2 s.
    route({
      method: 'GET',
      path: '/_ready',
      policy: 'credential-free',
      alsoAtRoot: true,
      rateLimit: { bucket: 'readiness', limit: 120, windowSeconds: 60 },
      async handler() {
        const [database, replica, sharedState, objectStore] = await Promise.all([
          probe(() => services.db.query('SELECT 1')),
          services.readReplica === services.db ? undefined : probe(() => services.readReplica.query('SELECT 1')),
          probe(() => services.rateLimiter.consume('readiness-probe', 1_000_000, 1000, services.clock.now())),
          probe(() => services.objects.size('readiness-probe')),
        ]);
        const checks = {
          database,
          ...(replica ? { read_replica: replica } : {}),
          shared_state: sharedState,
          object_store: objectStore,
        };
        if (Object.values(checks).some((c) => c !== 'ok'))
          throw new ApiError('SERVICE_UNAVAILABLE', { extra: { checks } });
        return { status: 'ready', checks };
      },
    }),
    // Prometheus metrics (docs/deployment.md): only with HEARTH_METRICS_TOKEN, and only for that bearer token;
    // HEARTH_METRICS_PORT serves the same text on a private port instead.
    route({
      method: 'GET',
      path: '/metrics',
      root: true,
      policy: 'credential-free',
      rateLimit: { bucket: 'metrics', limit: 120, windowSeconds: 60 },
      async handler(ctx) {
        const token = config.metricsToken;
        if (!token) throw new ApiError('NOT_FOUND');
        const header = ctx.reply.request.headers.authorization ?? '';
        const offered = /^Bearer (.+)$/.exec(header)?.[1] ?? '';
        if (!constantTimeEqual(digest(offered), digest(token))) throw new ApiError('UNAUTHORIZED');
        const { contentType, body } = await services.metrics.render();
        ctx.reply.code(200).header('content-type', contentType).header('cache-control', 'no-store').send(body);
        return REPLY_SENT;
      },
    }),
  ];
}
