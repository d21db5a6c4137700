import type { Config } from '../../config/config.ts';

export interface CaptchaView {
  provider: Config['captchaProvider'];
  hcaptcha_site_key: string | null;
  turnstile_site_key: string | null;
}

/**
 * What clients need to show the widget (discovery `captcha`, docs/conventions.md#discovery-and-cors; the Admin instance config shows the
 * same, read-only). Site keys are public; the secret never appears.
 */
export function captchaView(config: Config): CaptchaView {
  return {
    provider: config.captchaProvider,
    hcaptcha_site_key: config.hcaptchaSiteKey ?? null,
    turnstile_site_key: config.turnstileSiteKey ?? null,
  };
}
