import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { snowflakeField } from '../../http/fields.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { openUnder, sealUnder } from '../../platform/crypto/sealed-box.ts';
import { constantTimeEqual, digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import { tokenResponse } from '../users/views.ts';
import { clientInfoOf } from './client-info.ts';
import type { ClientInfo } from './session-store.ts';

/** How long a hand-off code waits for a signed-in device, and then for the first device to collect its session. */
export const HANDOFF_TTL_MS = 5 * 60_000;
/** Eight characters a person can read out and type: no 0/O, 1/I/L. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
const SESSION_KEY_LABEL = 'hearth handoff session';

/** What the code's row carries (the row is keyed by the code's digest); the minted session is sealed under the code. */
interface HandoffData {
  poll_secret_hash: string;
  client?: ClientInfo;
  completed?: boolean;
  user_id?: string;
  sealed_session?: string;
}

function newCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** Codes are read out by people: case and a separating dash or spaces do not matter. */
function normaliseCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

function sealKey(code: string, data: HandoffData): string {
  return `${code}:${data.poll_secret_hash}`;
}

const invalidCode = () => fieldError('code', 'INVALID_CODE', 'Invalid or expired hand-off code');

/** What `handoffRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type HandoffRoutesDeps = Pick<AppServices, 'credentials' | 'mfaView' | 'sessions' | 'tokens' | 'users'>;

/**
 * Session exchange (docs/accounts.md#session-exchange): a device without a session shows a code, a signed-in
 * device approves it and mints a second session for the same account, and the first device collects it.
 */
export function handoffRoutes(services: HandoffRoutesDeps): AnyRoute[] {
  const { credentials, sessions, tokens, users } = services;

  return [
    route({
      method: 'POST',
      path: '/auth/handoff/initiate',
      policy: 'none',
      rateLimit: { bucket: 'auth:handoff:initiate', limit: 10, windowSeconds: 60 },
      async handler(ctx) {
        const code = newCode();
        const pollSecret = randomBase62(64);
        const data: HandoffData = { poll_secret_hash: digest(pollSecret), client: clientInfoOf(ctx.request.headers) };
        await tokens.issue('handoff', null, HANDOFF_TTL_MS, { ...data }, { token: code });
        return { code, expires_at: new Date(ctx.now + HANDOFF_TTL_MS).toISOString(), poll_secret: pollSecret };
      },
    }),

    route({
      method: 'POST',
      path: '/auth/handoff/complete',
      policy: 'none',
      rateLimit: { bucket: 'auth:handoff:complete', limit: 10, windowSeconds: 60 },
      body: z.object({ code: z.string().max(64), token: z.string().max(256).nullish(), user_id: snowflakeField }),
      async handler(ctx) {
        // The approving device's session: in the body, or as the request's own credential.
        const principal = ctx.body.token
          ? await credentials.resolve({ kind: 'session', token: ctx.body.token })
          : ctx.principal;
        if (!principal) throw new ApiError('UNAUTHORIZED');
        if (principal.kind !== 'session' || principal.user.id !== ctx.body.user_id) throw new ApiError('ACCESS_DENIED');
        const code = normaliseCode(ctx.body.code);
        // One approval per code, even when two arrive at once.
        const live = await tokens.claim<HandoffData>('handoff', code);
        if (!live) throw invalidCode();
        const session = await sessions.issue(principal.user.id, ctx.ip, live.data.client ?? {});
        const completed: HandoffData = {
          ...live.data,
          completed: true,
          user_id: principal.user.id,
          // Sealed under the code, which the row holds only as a digest (as IP authorisation seals under its ticket).
          sealed_session: sealUnder(sealKey(code, live.data), SESSION_KEY_LABEL, session.token),
        };
        await tokens.update('handoff', code, { ...completed });
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/auth/handoff/:code/status',
      policy: 'none',
      rateLimit: { bucket: 'auth:handoff:status', limit: 60, windowSeconds: 60 },
      body: z.object({ poll_secret: z.string().max(256) }),
      async handler(ctx) {
        const code = normaliseCode(ctx.params.code ?? '');
        const live = await tokens.peek<HandoffData>('handoff', code);
        // An unknown, expired or collected code and a wrong secret read the same.
        if (!live || !constantTimeEqual(live.data.poll_secret_hash, digest(ctx.body.poll_secret)))
          return { status: 'expired' };
        if (!live.data.completed || !live.data.user_id || !live.data.sealed_session) return { status: 'pending' };
        const used = await tokens.consume<HandoffData>('handoff', code);
        if (!used) return { status: 'expired' };
        const token = openUnder(sealKey(code, live.data), SESSION_KEY_LABEL, live.data.sealed_session);
        const user = await users.findById(live.data.user_id);
        if (!token || !user) return { status: 'expired' };
        return { status: 'completed', ...(await tokenResponse(services, user, token)) };
      },
    }),
  ];
}
