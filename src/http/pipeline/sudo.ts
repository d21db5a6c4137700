import type { AppServices } from '../../app-services.ts';
import type { Principal } from '../../identity/principal.ts';
import type { AnyRoute } from '../route.ts';
import type { RequestState } from './request-context.ts';

export type SudoDeps = Pick<AppServices, 'sudo' | 'recordAuthFailure'>;

/** What the route asks of sudo mode for this body: `y`, `y0` (no proof minted or echoed) or nothing. */
export function sudoModeFor(spec: Pick<AnyRoute, 'sudo'>, body: unknown): 'y' | 'y0' | undefined {
  return typeof spec.sudo === 'function' ? (spec.sudo(body) ? 'y' : undefined) : spec.sudo;
}

/**
 * Step 9 (docs/mfa-and-sudo.md#sudo-mode): when the route asks for it, `SudoMode.require` checks the proof header or
 * the body's fields (a failure counts towards the IP-ban trigger). Returns the proof to echo in
 * `X-Service-Sudo-Mode-JWT`, if any.
 */
export async function sudo(
  deps: SudoDeps,
  spec: Pick<AnyRoute, 'sudo'>,
  input: { body: unknown; rawBody: unknown; proofHeader: string | string[] | undefined },
  principal: Principal | undefined,
  state: Pick<RequestState, 'ip' | 'strict'>,
): Promise<string | undefined> {
  const sudoMode = sudoModeFor(spec, input.body);
  if (!sudoMode || !principal) return undefined;
  const outcome = await deps.sudo.require(principal, {
    rawBody: input.rawBody,
    headerProof: typeof input.proofHeader === 'string' ? input.proofHeader : undefined,
    noProof: sudoMode === 'y0',
    strict: state.strict,
    onFailure: () => deps.recordAuthFailure(state.ip, state.strict),
  });
  return outcome.responseProof;
}
