import type { AppServices } from '../../app-services.ts';
import { JsonText } from '../../http/route.ts';
import { type PrivateUser, privateUser, type UserRecord } from '../../identity/user-record.ts';
import { authenticatorTypes, hasMfa, type MfaStatus } from '../mfa/mfa-factors.ts';

export async function privateUserView(
  services: ViewServices,
  user: UserRecord,
  options: { includeEmail?: boolean } = {},
): Promise<PrivateUser> {
  return renderPrivateUser(user, await services.mfaView.status(user.id), options);
}

function renderPrivateUser(user: UserRecord, status: MfaStatus, options: { includeEmail?: boolean }) {
  return privateUser(user, { mfaEnabled: hasMfa(status), authenticatorTypes: authenticatorTypes(status) }, options);
}

/** The cached MFA status keeps the views off the database (docs/performance.md). */
type ViewServices = Pick<AppServices, 'mfaView'>;
type RenderedViews = { status: MfaStatus; withEmail?: JsonText; withoutEmail?: JsonText };

/**
 * The private view as JSON text, rendered once per user snapshot and MFA status. Both are immutable cached
 * objects that are replaced (never edited) when the account changes, so identity is the cache key and a
 * change can never serve a stale body. It keeps `GET /users/@me`, the hottest authenticated route, from
 * rebuilding and serialising the same 25 members on every call.
 */
const renderedViews = new WeakMap<UserRecord, RenderedViews>();

export function privateUserJson(
  services: ViewServices,
  user: UserRecord,
  options: { includeEmail: boolean },
): JsonText | Promise<JsonText> {
  const status = services.mfaView.status(user.id);
  return status instanceof Promise
    ? status.then((known) => renderedPrivateUser(user, known, options.includeEmail))
    : renderedPrivateUser(user, status, options.includeEmail);
}

function renderedPrivateUser(user: UserRecord, status: MfaStatus, includeEmail: boolean): JsonText {
  let views = renderedViews.get(user);
  if (views?.status !== status) {
    views = { status };
    renderedViews.set(user, views);
  }
  const slot = includeEmail ? 'withEmail' : 'withoutEmail';
  const rendered = views[slot] ?? new JsonText(JSON.stringify(renderPrivateUser(user, status, { includeEmail })));
  views[slot] = rendered;
  return rendered;
}

/** The token response (`tokenResponse`). */
export type TokenResponse = { token: string; user_id: string; user: PrivateUser };

/** The token response `{token, user_id, user}` (docs/accounts.md): the answer of every route that signs a user in. */
export async function tokenResponse(services: ViewServices, user: UserRecord, token: string): Promise<TokenResponse> {
  return { token, user_id: user.id, user: await privateUserView(services, user) };
}
