import type { AppServices } from '../../app-services.ts';
import type { IpBan } from '../../platform/state/ip-bans.ts';
import { type ApiError, bannedError } from '../errors.ts';
import type { RequestState } from './request-context.ts';

export type BanGateDeps = Pick<AppServices, 'banCheck' | 'clock'>;

/** `/_health` and the test harness are never refused by a ban. */
export function isBanExempt(path: string): boolean {
  return path === '/_health' || path === '/v1/_health' || path.startsWith('/test/') || path.startsWith('/v1/test/');
}

/**
 * Step 2: the IP ban (automatic bans from the shared store, manual bans from the Admin API). Synchronous with
 * the in-process store, so most requests pay no promise; a refusal is returned, not thrown.
 */
export function banGate(
  deps: BanGateDeps,
  state: Pick<RequestState, 'ip' | 'ipKey'>,
): ApiError | undefined | Promise<ApiError | undefined> {
  const ban = deps.banCheck(state.ip, state.ipKey, deps.clock.now());
  if (ban instanceof Promise) return ban.then((found) => refusal(deps, found, state.ip));
  return refusal(deps, ban, state.ip);
}

function refusal(deps: BanGateDeps, ban: IpBan | undefined, ip: string): ApiError | undefined {
  return ban ? bannedError(ban, ip, deps.clock.now()) : undefined;
}
