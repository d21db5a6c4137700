import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../../api/errors.ts';
import type { TokenResponse } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { EmailDeliveryNotice } from '../../components/EmailDeliveryNotice.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';

export interface IpTicket {
  ticket: string;
  email: string;
  resendIn: number;
}

const POLL_MS = 2000;

/**
 * New-location approval: the server emailed a link; this tab polls the ticket and continues by itself once
 * the link is opened anywhere (AuthorizeIpPage on another device or tab).
 */
export function IpAuthorizationWait({
  ticket,
  onDone,
  onRestart,
}: {
  ticket: IpTicket;
  onDone: (response: TokenResponse) => Promise<void>;
  onRestart: () => void;
}) {
  const { t } = useTranslation();
  const { api } = useApp();
  const [expired, setExpired] = useState(false);
  const [resendAt, setResendAt] = useState(() => Date.now() + ticket.resendIn * 1000);
  const [now, setNow] = useState(Date.now());
  const [resent, setResent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const done = useRef(onDone);
  done.current = onDone;

  useEffect(() => {
    const controller = new AbortController();
    let timer: number | undefined;
    const poll = async () => {
      try {
        const result = await api.auth.ipAuthorizationPoll(ticket.ticket, controller.signal);
        if (result.completed) {
          await done.current(result);
          return;
        }
      } catch (caught) {
        if (controller.signal.aborted) return;
        if (caught instanceof HearthApiError && caught.displayCode() === 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET') {
          setExpired(true);
          return;
        }
        // Network blips and rate limits: keep waiting, the next poll may pass.
      }
      timer = window.setTimeout(() => void poll(), POLL_MS);
    };
    timer = window.setTimeout(() => void poll(), POLL_MS);
    return () => {
      controller.abort();
      window.clearTimeout(timer);
    };
  }, [api, ticket.ticket]);

  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);

  const resend = async () => {
    setError(null);
    try {
      await api.auth.ipAuthorizationResend(ticket.ticket);
      setResent(true);
      setResendAt(Number.POSITIVE_INFINITY);
    } catch (caught) {
      if (caught instanceof HearthApiError && typeof caught.body.resend_available_in === 'number') {
        setResendAt(Date.now() + caught.body.resend_available_in * 1000);
      }
      setError(caught);
    }
  };

  if (expired) {
    return (
      <PageLayout title={t('signIn.ipTitle')}>
        <p role="alert">{t('signIn.ipExpired')}</p>
        <Button onClick={onRestart}>{t('signIn.ipStartOver')}</Button>
      </PageLayout>
    );
  }

  const waitSeconds = Math.ceil((resendAt - now) / 1000);
  return (
    <PageLayout title={t('signIn.ipTitle')}>
      <p>{t('signIn.ipBody', { email: ticket.email })}</p>
      <EmailDeliveryNotice sent={resent ? 1 : 0} />
      <p role="status" className="waiting">
        <span className="spinner" aria-hidden="true" /> {t('signIn.ipWaiting')}
      </p>
      {resent && <Notice tone="success">{t('signIn.ipResent')}</Notice>}
      <ErrorNotice error={error} />
      {!resent && Number.isFinite(resendAt) && (
        <>
          {waitSeconds > 0 && <p className="hint">{t('signIn.ipResendIn', { count: waitSeconds })}</p>}
          <Button variant="secondary" disabled={waitSeconds > 0} onClick={() => void resend()}>
            {t('signIn.ipResend')}
          </Button>
        </>
      )}
      <Button variant="link" onClick={onRestart}>
        {t('common.back')}
      </Button>
    </PageLayout>
  );
}
