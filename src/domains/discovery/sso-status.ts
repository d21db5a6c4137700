import type { Config } from '../../config/config.ts';
import { type InstanceSettings, ssoConfigured } from '../instance/instance-settings.ts';

export function ssoRedirectUri(config: Pick<Config, 'webappUrl'>): string {
  return `${config.webappUrl}/auth/sso/callback`;
}

/** What clients show for single sign-on (`ssoStatus`). */
export type SsoStatusView = { enabled: boolean; enforced: boolean; display_name: string; redirect_uri: string };

/** What clients show for single sign-on (`GET /v1/auth/sso/status`, discovery `sso`). */
export function ssoStatus(config: Pick<Config, 'webappUrl'>, settings: InstanceSettings): SsoStatusView {
  const sso = settings.get().sso;
  const enabled = sso.enabled && ssoConfigured(sso);
  return {
    enabled,
    enforced: enabled && sso.enforced,
    display_name: sso.display_name,
    redirect_uri: ssoRedirectUri(config),
  };
}
