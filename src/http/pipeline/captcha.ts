import type { AppServices } from '../../app-services.ts';
import type { Principal } from '../../identity/principal.ts';
import type { AnyRoute } from '../route.ts';
import type { RequestState } from './request-context.ts';

export type CaptchaDeps = Pick<AppServices, 'captcha'>;

/** Whether the route's CAPTCHA applies: a credential that resolved is proof enough of a person, and test mode waives it unless strict (docs/conventions.md#policies). */
export function needsCaptcha(
  spec: Pick<AnyRoute, 'captcha'>,
  principal: Principal | undefined,
  state: Pick<RequestState, 'strict'>,
): boolean {
  return Boolean(spec.captcha) && !principal && state.strict;
}

/** Step 6: the CAPTCHA answer from `X-Captcha-Token`/`X-Captcha-Type`; the verifier throws the refusal. */
export async function captcha(
  deps: CaptchaDeps,
  headers: Record<string, string | string[] | undefined>,
  state: Pick<RequestState, 'ip'>,
): Promise<void> {
  await deps.captcha.verify({
    token: singleHeader(headers['x-captcha-token']),
    type: singleHeader(headers['x-captcha-type']),
    remoteIp: state.ip,
  });
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
