import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Harvest } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { formatDate } from '../../i18n/format.ts';
import { useLoaded } from '../../lib/use-loaded.ts';

/** While an export is being built, the section looks again this often (the email says when it is ready too). */
const POLL_MS = 3000;

/**
 * "Your data": ask for an archive of the account's data and follow it (queued, being prepared, emailed,
 * downloaded, failed). The server allows one request a day; the button says until when it waits.
 */
export function DataSection() {
  const { t } = useTranslation();
  const { api, user } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const [harvest, setHarvest, load] = useLoaded(() => api.users.harvest(), api, setError);

  const building = harvest?.status === 'pending' || harvest?.status === 'running';
  useEffect(() => {
    if (!building) return;
    const timer = window.setInterval(() => void load(), POLL_MS);
    return () => window.clearInterval(timer);
  }, [building, load]);

  const request = async () => {
    setBusy(true);
    setError(null);
    try {
      setHarvest(await api.users.requestHarvest());
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const waitUntil =
    harvest?.next_request_at && Date.parse(harvest.next_request_at) > Date.now() ? harvest.next_request_at : null;
  const verified = user?.verified === true;

  return (
    <section aria-labelledby="data-heading">
      <h2 id="data-heading">{t('settings.dataTitle')}</h2>
      <p>{t('settings.dataIntro')}</p>
      {harvest !== undefined && (
        <p role="status" data-testid="harvest-status">
          {statusSentence(t, harvest)}
        </p>
      )}
      {!verified && <p>{t('settings.dataNeedsVerifiedEmail')}</p>}
      <ErrorNotice error={error} />
      <div className="actions">
        <Button
          variant="secondary"
          busy={busy}
          disabled={!verified || waitUntil !== null || harvest === undefined}
          onClick={() => void request()}
        >
          {t('settings.dataRequest')}
        </Button>
      </div>
      {waitUntil && <p>{t('settings.dataNextRequest', { date: formatDate(waitUntil, 'dateTime') })}</p>}
    </section>
  );
}

function statusSentence(t: (key: string, options?: Record<string, unknown>) => string, harvest: Harvest | null) {
  if (!harvest) return t('settings.dataNone');
  switch (harvest.status) {
    case 'pending':
    case 'running':
      return t('settings.dataPreparing');
    case 'failed':
      return t('settings.dataFailed');
    case 'completed':
      if (harvest.downloaded) return t('settings.dataDownloaded');
      if (harvest.link_expires_at && Date.parse(harvest.link_expires_at) <= Date.now())
        return t('settings.dataExpired');
      return t('settings.dataReady', { date: formatDate(harvest.link_expires_at ?? Date.now(), 'dateTime') });
  }
}
