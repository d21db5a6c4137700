import { type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../api/errors.ts';
import { errorSentence } from './error-sentence.ts';

/**
 * Shows what went wrong as a sentence (role="alert", read out at once). `RATE_LIMITED` and the resend
 * cooldown become a live countdown that says when trying again works.
 */
export function ErrorNotice({ error }: { error: unknown }) {
  const { t } = useTranslation();
  if (!error) return null;
  if (error instanceof HearthApiError && error.status === 429 && error.retryAfterSeconds !== undefined) {
    return (
      <RateLimitCountdown seconds={error.retryAfterSeconds} key={String(error.retryAfterSeconds) + error.message} />
    );
  }
  return (
    <p role="alert" className="notice error">
      {errorSentence(t, error)}
    </p>
  );
}

export function RateLimitCountdown({ seconds }: { seconds: number }) {
  const { t } = useTranslation();
  const [deadline] = useState(() => Date.now() + seconds * 1000);
  const [left, setLeft] = useState(Math.ceil(seconds));
  useEffect(() => {
    const timer = window.setInterval(() => {
      const remaining = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      setLeft(remaining);
      if (remaining === 0) window.clearInterval(timer);
    }, 250);
    return () => window.clearInterval(timer);
  }, [deadline]);
  return (
    <p role="alert" className="notice error" data-testid="rate-limit">
      {left > 0 ? t('rateLimit.wait', { count: left }) : t('rateLimit.ready')}
    </p>
  );
}

export function Notice({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'success' }) {
  return (
    <p role="status" className={`notice ${tone}`}>
      {children}
    </p>
  );
}
