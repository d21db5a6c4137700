import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import { ipKey } from '../../platform/net/cidr.ts';
import type { IpBan } from '../../platform/state/ip-bans.ts';
import { adminRoute } from './admin-route.ts';
import { type AuditLog, auditActor } from './audit-log.ts';
import { canonicalIpOrCidr, type ManualIpBans } from './manual-ip-bans.ts';

const MAX_BAN_SECONDS = 10 * 365 * 86_400;

const ipField = z
  .string()
  .max(64)
  .transform((value, ctx) => {
    const canonical = canonicalIpOrCidr(value);
    if (canonical) return canonical;
    ctx.addIssue({ code: 'custom', message: 'Must be an IP address or a CIDR range' });
    return z.NEVER;
  });

function banView(ban: IpBan) {
  return {
    ip: ban.ip,
    kind: ban.kind,
    expires_at: ban.expiresAt === null ? null : new Date(ban.expiresAt).toISOString(),
  };
}

function isSingleAddress(canonical: string): boolean {
  return !canonical.includes('/');
}

/** What `banRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type BanRoutesDeps = Pick<AppServices, 'db' | 'ipBans'>;

/** IP bans (docs/admin.md#ip-bans, docs/conventions.md#ip-bans): manual bans by address or range, and the automatic ones from shared state. */
export function banRoutes(services: BanRoutesDeps, deps: { manualBans: ManualIpBans; audit: AuditLog }): AnyRoute[] {
  const { db, ipBans } = services;
  const { manualBans, audit } = deps;

  /** The ban that applies to exactly this address or range: automatic first, as the request path checks. */
  async function banFor(canonical: string, now: number): Promise<IpBan | undefined> {
    if (isSingleAddress(canonical)) {
      return (await ipBans.find(ipKey(canonical), now)) ?? manualBans.find(canonical, now);
    }
    // An automatic IPv6 ban is keyed by its /64, which is how a range reaches it.
    return manualBans.findExact(canonical, now) ?? (await ipBans.find(canonical, now));
  }

  return [
    adminRoute({
      method: 'POST',
      path: '/admin/bans/ip/add',
      acl: 'ban:ip:add',
      kind: 'write',
      body: z.object({
        ip: ipField,
        expires_in_seconds: z.number().int().min(1).max(MAX_BAN_SECONDS).optional(),
      }),
      async handler(ctx) {
        const actor = auditActor(ctx);
        const { ip, expires_in_seconds: seconds } = ctx.body;
        const expiresAt = seconds === undefined ? null : ctx.now + seconds * 1000;
        const previous = manualBans.findExact(ip, ctx.now);
        await db.transaction(async (tx) => {
          await manualBans.put(tx, ip, expiresAt, actor.adminUserId, ctx.now);
          await audit.record(tx, actor, {
            action: 'ip_ban.add',
            targetType: 'ip_ban',
            targetId: ip,
            ...(previous ? { before: banView(previous) } : {}),
            after: banView({ ip, kind: 'manual', expiresAt }),
          });
        });
        await manualBans.changed();
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/bans/ip/remove',
      acl: 'ban:ip:remove',
      kind: 'write',
      body: z.object({ ip: ipField }),
      async handler(ctx) {
        const actor = auditActor(ctx);
        const ip = ctx.body.ip;
        const automaticKey = isSingleAddress(ip) ? ipKey(ip) : ip;
        const automatic = await ipBans.find(automaticKey, ctx.now);
        const removed: IpBan[] = [];
        await db.transaction(async (tx) => {
          const manual = manualBans.findExact(ip, ctx.now);
          // An expired row goes too, but only a live ban counts as one removed.
          if ((await manualBans.delete(tx, ip)) && manual) removed.push(manual);
          if (automatic) removed.push(automatic);
          if (removed.length === 0) throw new ApiError('UNKNOWN_BAN');
          await audit.record(tx, actor, {
            action: 'ip_ban.remove',
            targetType: 'ip_ban',
            targetId: ip,
            before: removed.map(banView),
          });
        });
        if (automatic) await ipBans.remove(automaticKey);
        await manualBans.changed();
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/bans/ip/check',
      acl: 'ban:ip:check',
      kind: 'read',
      body: z.object({ ip: ipField }),
      async handler(ctx) {
        const ban = await banFor(ctx.body.ip, ctx.now);
        return ban ? { banned: true, ban: banView(ban) } : { banned: false };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/bans/ip/list',
      acl: 'ban:ip:check',
      kind: 'read',
      async handler(ctx) {
        const automatic = await ipBans.list(ctx.now);
        return { bans: [...manualBans.list(ctx.now), ...automatic].map(banView) };
      },
    }),
  ];
}
