import type { Config } from '../../config/config.ts';
import type { Clock } from '../../platform/clock.ts';
import { anyCidrContains, ipKey as toIpKey } from '../../platform/net/cidr.ts';
import type { IpBanStore } from '../../platform/state/ip-bans.ts';

type BanSettings = Pick<Config, 'ipBanFailures' | 'ipBanExempt' | 'ipBanWindowSeconds' | 'ipBanDurationSeconds'>;

/**
 * Counts failed authentications per client IP and bans the IP once they reach the limit inside the window
 * (docs/conventions.md#rate-limits). Shared by the HTTP pipeline, the routes that check a secret themselves and the gateway.
 * `strict` is false only for test-mode requests without `X-Test-Strict: true`, which are never counted.
 */
export function authFailureRecorder(
  config: BanSettings,
  ipBans: IpBanStore,
  clock: Clock,
): (ip: string, strict: boolean) => Promise<void> {
  return async (ip, strict) => {
    if (!strict || config.ipBanFailures === 0 || anyCidrContains(config.ipBanExempt, ip)) return;
    const key = toIpKey(ip);
    const now = clock.now();
    const count = await ipBans.recordFailure(key, now, config.ipBanWindowSeconds * 1000);
    if (count >= config.ipBanFailures) {
      await ipBans.ban({ ip: key, kind: 'automatic', expiresAt: now + config.ipBanDurationSeconds * 1000 });
    }
  };
}
