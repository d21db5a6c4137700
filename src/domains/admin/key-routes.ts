import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import type { Principal } from '../../identity/principal.ts';
import { pathId } from '../chat/access.ts';
import { aclListField, assertCanGrant } from './acls.ts';
import { type AdminApiKeyRow, type AdminApiKeys, adminApiKeyView } from './admin-api-keys.ts';
import { adminRoute } from './admin-route.ts';
import { type AuditLog, auditActor } from './audit-log.ts';

const ACL = 'admin_api_key:manage';
const nameField = z.string().trim().min(1).max(100);

const createBody = z.object({
  name: nameField,
  expires_in_days: z.number().int().min(1).max(365).optional(),
  acls: aclListField,
});

const patchBody = z.object({ name: nameField.optional(), acls: aclListField.optional() });

/** The ACL sets a grant must fit in: the user's, and the calling key's when a key is calling. */
function grantors(principal: Principal): string[][] {
  const user = [...principal.user.acls];
  return principal.kind === 'admin_key' ? [user, [...principal.keyAcls]] : [user];
}

/** The audit trail's picture of a key: never its secret or digest. */
function keyAuditState(row: AdminApiKeyRow) {
  return { name: row.name, acls: row.acls, expires_at: row.expires_at?.toISOString() ?? null };
}

/** Anything that is not a snowflake cannot name a key: same answer as a key that does not exist. */
function keyIdParam(raw: string | undefined): string {
  return pathId(raw, 'ADMIN_API_KEY_NOT_FOUND');
}

/** What `keyRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type KeyRoutesDeps = Pick<AppServices, 'credentials' | 'db'>;

/** Admin API keys (docs/admin.md): the caller manages only their own keys. */
export function keyRoutes(services: KeyRoutesDeps, deps: { keys: AdminApiKeys; audit: AuditLog }): AnyRoute[] {
  const { db, credentials } = services;
  const { keys, audit } = deps;

  return [
    adminRoute({
      method: 'POST',
      path: '/admin/api-keys',
      acl: ACL,
      kind: 'key_create',
      sudo: 'y',
      body: createBody,
      async handler(ctx) {
        const principal = ctx.principal as Principal;
        const actor = auditActor(ctx);
        assertCanGrant(grantors(principal), ctx.body.acls);
        const minted = await db.transaction(async (tx) => {
          const created = await keys.create(tx, {
            ownerId: principal.user.id,
            name: ctx.body.name,
            acls: ctx.body.acls,
            expiresInDays: ctx.body.expires_in_days,
            now: ctx.now,
          });
          await audit.record(tx, actor, {
            action: 'admin_api_key.create',
            targetType: 'admin_api_key',
            targetId: created.keyId,
            after: keyAuditState(created.row),
          });
          return created;
        });
        return {
          key_id: minted.keyId,
          key: minted.key,
          name: minted.row.name,
          created_at: minted.row.created_at.toISOString(),
          expires_at: minted.row.expires_at?.toISOString() ?? null,
          acls: minted.row.acls,
        };
      },
    }),

    adminRoute({
      method: 'GET',
      path: '/admin/api-keys',
      acl: ACL,
      kind: 'read',
      async handler(ctx) {
        const rows = await keys.listLive(db, ctx.user.id, ctx.now);
        return rows.map(adminApiKeyView);
      },
    }),

    adminRoute({
      method: 'GET',
      path: '/admin/api-keys/:keyId',
      acl: ACL,
      kind: 'read',
      async handler(ctx) {
        const row = await keys.findLive(db, ctx.user.id, keyIdParam(ctx.params.keyId), ctx.now);
        if (!row) throw new ApiError('ADMIN_API_KEY_NOT_FOUND');
        return adminApiKeyView(row);
      },
    }),

    adminRoute({
      method: 'PATCH',
      path: '/admin/api-keys/:keyId',
      acl: ACL,
      kind: 'write',
      body: patchBody,
      async handler(ctx) {
        const principal = ctx.principal as Principal;
        const actor = auditActor(ctx);
        const keyId = keyIdParam(ctx.params.keyId);
        if (ctx.body.acls) assertCanGrant(grantors(principal), ctx.body.acls);
        const updated = await db.transaction(async (tx) => {
          const before = await keys.findLive(tx, principal.user.id, keyId, ctx.now);
          if (!before) throw new ApiError('ADMIN_API_KEY_NOT_FOUND');
          const changes: { name?: string; acls?: string[] } = {};
          if (ctx.body.name !== undefined) changes.name = ctx.body.name;
          if (ctx.body.acls !== undefined) changes.acls = ctx.body.acls;
          const after = await keys.update(tx, keyId, changes);
          await audit.record(tx, actor, {
            action: 'admin_api_key.update',
            targetType: 'admin_api_key',
            targetId: keyId,
            before: keyAuditState(before),
            after: keyAuditState(after),
          });
          return after;
        });
        // The credential cache holds the key's ACLs: narrowing must apply at once.
        await credentials.invalidate({ tokenHash: updated.secret_hash });
        return adminApiKeyView(updated);
      },
    }),

    adminRoute({
      method: 'DELETE',
      path: '/admin/api-keys/:keyId',
      acl: ACL,
      kind: 'write',
      async handler(ctx) {
        const actor = auditActor(ctx);
        const keyId = keyIdParam(ctx.params.keyId);
        const revoked = await db.transaction(async (tx) => {
          const row = await keys.findLive(tx, ctx.user.id, keyId, ctx.now);
          if (!row) throw new ApiError('ADMIN_API_KEY_NOT_FOUND');
          await keys.revoke(tx, keyId, ctx.now);
          await audit.record(tx, actor, {
            action: 'admin_api_key.revoke',
            targetType: 'admin_api_key',
            targetId: keyId,
            before: keyAuditState(row),
          });
          return row;
        });
        await credentials.invalidate({ tokenHash: revoked.secret_hash });
        return { success: true };
      },
    }),
  ];
}
