import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { CaptchaAnswer } from '../api/api.ts';
import type { CaptchaConfig } from '../api/types.ts';

interface WidgetApi {
  render(element: HTMLElement, options: Record<string, unknown>): string | number;
  remove?(id: string | number): void;
}

declare global {
  interface Window {
    hcaptcha?: WidgetApi;
    turnstile?: WidgetApi;
  }
}

const SCRIPTS = {
  hcaptcha: 'https://js.hcaptcha.com/1/api.js?render=explicit',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit',
} as const;

function loadScript(src: string): Promise<void> {
  const existing = document.querySelector(`script[src="${src}"]`);
  if (existing) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.async = true;
    script.onload = () => resolve();
    script.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(script);
  });
}

/**
 * The CAPTCHA widget the instance configured (discovery `captcha`), or nothing when none is. The provider's
 * script is allowed by the CSP only when that provider is configured (src/web/security-headers.ts).
 */
export function Captcha({
  config,
  onAnswer,
}: {
  config: CaptchaConfig;
  onAnswer: (answer: CaptchaAnswer | undefined) => void;
}) {
  const { t } = useTranslation();
  const holder = useRef<HTMLDivElement>(null);
  const provider = config.provider;
  useEffect(() => {
    if (provider === 'none' || !holder.current) return;
    const siteKey = provider === 'hcaptcha' ? config.hcaptcha_site_key : config.turnstile_site_key;
    let cancelled = false;
    void loadScript(SCRIPTS[provider]).then(() => {
      const widget = provider === 'hcaptcha' ? window.hcaptcha : window.turnstile;
      if (cancelled || !widget || !holder.current) return;
      widget.render(holder.current, {
        sitekey: siteKey,
        callback: (token: string) => onAnswer({ token, type: provider }),
        'expired-callback': () => onAnswer(undefined),
      });
    });
    return () => {
      cancelled = true;
    };
  }, [provider, config, onAnswer]);
  if (provider === 'none') return null;
  return (
    <fieldset className="field">
      <legend className="label">{t('register.captchaLabel')}</legend>
      <div ref={holder} />
    </fieldset>
  );
}
