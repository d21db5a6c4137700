import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { emailDeliveryFailing } from '../api/discovery.ts';

/** A sent email is handed to the mail server just after the answer: the status is asked again after this. */
const RECHECK_MS = 1500;

/**
 * After an action that sends an email, says so when the server cannot deliver email right now, instead of
 * leaving "check your email" alone (docs/deployment.md#email-delivery). `sent` changes each time one was sent.
 */
export function EmailDeliveryNotice({ sent }: { sent: number | null }) {
  const { t } = useTranslation();
  const [failing, setFailing] = useState(false);
  useEffect(() => {
    if (sent === null) return;
    let live = true;
    const check = () =>
      void emailDeliveryFailing().then((answer) => {
        if (live && answer) setFailing(true);
      });
    check();
    const timer = window.setTimeout(check, RECHECK_MS);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [sent]);
  if (!failing) return null;
  return (
    <p role="alert" className="notice error">
      {t('common.emailDeliveryFailing')}
    </p>
  );
}
