import type { Config } from '../config/config.ts';

/** Script and frame origins each CAPTCHA provider's widget loads from. */
const CAPTCHA_ORIGINS: Record<Config['captchaProvider'], string[]> = {
  none: [],
  hcaptcha: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
  turnstile: ['https://challenges.cloudflare.com'],
};

/**
 * The CSP for the client's HTML. Scripts only from this origin (no inline script, no eval): an injected
 * `<script>` or `onerror=` attribute does not run. `connect-src` names the API and gateway origins from
 * configuration, because the client finds them through discovery and they may differ from the page's.
 */
export function contentSecurityPolicy(config: Pick<Config, 'publicUrl' | 'captchaProvider'>): string {
  const api = new URL(config.publicUrl);
  const gateway = `${api.protocol === 'https:' ? 'wss:' : 'ws:'}//${api.host}`;
  const captcha = CAPTCHA_ORIGINS[config.captchaProvider];
  const directives: Record<string, string[]> = {
    'default-src': ["'self'"],
    'script-src': ["'self'", ...captcha],
    'style-src': ["'self'", ...captcha],
    'img-src': ["'self'", 'data:', 'blob:', api.origin],
    'font-src': ["'self'"],
    'connect-src': ["'self'", api.origin, gateway, ...captcha],
    'frame-src': captcha.length > 0 ? captcha : ["'none'"],
    'worker-src': ["'self'"],
    'object-src': ["'none'"],
    'base-uri': ["'none'"],
    'form-action': ["'self'"],
    'frame-ancestors': ["'none'"],
  };
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${[...new Set(values)].join(' ')}`)
    .join('; ');
}
