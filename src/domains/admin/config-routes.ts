import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { type FieldError, formError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import { captchaView } from '../captcha/captcha-view.ts';
import type { InstanceSettingsValue } from '../instance/instance-settings.ts';
import { checkProvider } from '../sso/provider-check.ts';
import { publicSsoSettings, validateSsoUpdate } from '../sso/sso-settings.ts';
import { adminRoute, snowflakeField } from './admin-route.ts';
import { type AuditLog, auditActor } from './audit-log.ts';

const REGISTRATION_MODES = ['open', 'approval', 'closed'] as const;

/** Members that come from the deployment configuration: shown, but not changeable here. */
const READ_ONLY_MEMBERS = {
  captcha: 'the captcha provider is set by the deployment configuration',
  email: 'email delivery is set by SMTP_URL',
  ip_authorization: 'IP authorisation is set by HEARTH_IP_AUTHORIZATION',
} as const;

const updateBody = z.object({
  sso: z.unknown().optional(),
  registration: z.object({ mode: z.enum(REGISTRATION_MODES).optional() }).optional(),
  captcha: z.unknown().optional(),
  email: z.unknown().optional(),
  ip_authorization: z.unknown().optional(),
});

const auditQueryBody = z.object({
  admin_user_id: snowflakeField.optional(),
  target_type: z.string().max(64).optional(),
  target_id: z.string().max(128).optional(),
  action: z.string().max(64).optional(),
  before: snowflakeField.optional(),
  limit: z.number().int().min(1).max(100).default(50),
});

/** A read-only member as sent back by a read-modify-write client: the delivery status may have moved since. */
function withoutStatus(value: unknown): unknown {
  if (!value || typeof value !== 'object' || !('delivery' in value)) return value;
  const { delivery: _status, ...rest } = value;
  return rest;
}

/** What `configRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type ConfigRoutesDeps = Pick<AppServices, 'config' | 'db' | 'emails' | 'mailer' | 'settings'>;

/** Instance settings and the audit log (docs/admin.md). */
export function configRoutes(services: ConfigRoutesDeps, deps: { audit: AuditLog }): AnyRoute[] {
  const { db, config, settings } = services;
  const { audit } = deps;

  function view(value: InstanceSettingsValue = settings.get()) {
    return {
      sso: publicSsoSettings(value.sso, config),
      registration: { mode: value.registration.mode },
      captcha: captchaView(config),
      // `delivery`: whether email is going out now (docs/deployment.md#email-delivery); a status, not a setting.
      email: { enabled: services.emails.enabled, delivery: services.mailer.report() },
      ip_authorization: { enabled: config.ipAuthorization && (services.emails.enabled || config.testMode) },
    };
  }

  return [
    adminRoute({
      method: 'POST',
      path: '/admin/instance-config/get',
      acl: 'instance:config:view',
      kind: 'read',
      handler: () => view(),
    }),

    // "Test the connection" (docs/sso.md#testing-the-connection): the saved SSO settings, or the form's unsaved
    // ones merged onto them (validated as an update would be), reach the provider without signing anyone in.
    adminRoute({
      method: 'POST',
      path: '/admin/instance-config/sso/test',
      acl: 'instance:config:update',
      kind: 'write',
      body: z.object({ sso: z.unknown().optional() }),
      async handler(ctx) {
        const current = settings.get().sso;
        const sso = ctx.body.sso === undefined ? current : await validateSsoUpdate(current, ctx.body.sso);
        return checkProvider(sso, () => ctx.now);
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/instance-config/update',
      acl: 'instance:config:update',
      kind: 'write',
      body: updateBody,
      async handler(ctx) {
        const actor = auditActor(ctx);
        const current = settings.get();
        const before = view(current);

        // A read-modify-write client sends the read-only members back unchanged: only a change is refused.
        const errors: FieldError[] = [];
        for (const [member, why] of Object.entries(READ_ONLY_MEMBERS) as [keyof typeof READ_ONLY_MEMBERS, string][]) {
          const given = ctx.body[member];
          if (given !== undefined && !isDeepStrictEqual(withoutStatus(given), withoutStatus(before[member])))
            errors.push({ path: member, code: 'INVALID_FORMAT', message: `Read-only: ${why}` });
        }
        if (errors.length > 0) throw formError(errors);

        const next: InstanceSettingsValue = structuredClone(current);
        if (ctx.body.sso !== undefined) next.sso = await validateSsoUpdate(current.sso, ctx.body.sso);
        if (ctx.body.registration?.mode !== undefined) next.registration = { mode: ctx.body.registration.mode };

        const changedKeys = (['sso', 'registration'] as const).filter(
          (key) => !isDeepStrictEqual(next[key], current[key]),
        );
        const after = view(next);
        await db.transaction(async (tx) => {
          for (const key of changedKeys) await settings.write(tx, key, next[key], ctx.now);
          await audit.record(tx, actor, {
            action: 'instance_config.update',
            targetType: 'instance_config',
            targetId: 'instance',
            metadata: { changed: changedKeys },
            // The public views: the SSO client secret never enters the audit trail, only `client_secret_set`.
            ...(changedKeys.length > 0
              ? {
                  before: Object.fromEntries(changedKeys.map((key) => [key, before[key]])),
                  after: Object.fromEntries(changedKeys.map((key) => [key, after[key]])),
                }
              : {}),
          });
        });
        // Reload here and in every other process (SSO enforcement reads the settings from memory).
        if (changedKeys.length > 0) await settings.changed();
        return changedKeys.length > 0 ? view() : before;
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/audit-logs',
      acl: 'audit_log:view',
      kind: 'read',
      body: auditQueryBody,
      async handler(ctx) {
        return audit.search(db, ctx.body);
      },
    }),
  ];
}
