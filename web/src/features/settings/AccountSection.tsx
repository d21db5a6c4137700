import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { ConfirmDialog } from './ConfirmDialog.tsx';

type Ending = 'disable' | 'delete';

/**
 * Disabling (until the next password sign-in) and deleting the account (after a grace period a sign-in
 * cancels): a confirmation dialog, then the sudo prompt; both end every session, so the tab is signed out.
 */
export function AccountSection() {
  const { t } = useTranslation();
  const { api, signOutLocally } = useApp();
  const withSudo = useSudo();
  const [asking, setAsking] = useState<Ending | null>(null);
  const [busy, setBusy] = useState<Ending | null>(null);
  const [error, setError] = useState<unknown>(null);

  const end = async (kind: Ending) => {
    setAsking(null);
    setBusy(kind);
    setError(null);
    try {
      await withSudo((proof) => (kind === 'delete' ? api.users.delete(proof) : api.users.disable(proof)), {
        always: true,
      });
      signOutLocally();
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(caught);
      setBusy(null);
    }
  };

  return (
    <section aria-labelledby="account-end-heading">
      <h2 id="account-end-heading">{t('settings.endTitle')}</h2>
      <p>{t('settings.disableIntro')}</p>
      <p>{t('settings.deleteIntro')}</p>
      <ErrorNotice error={error} />
      <div className="actions">
        <Button variant="secondary" busy={busy === 'disable'} onClick={() => setAsking('disable')}>
          {t('settings.disableAccount')}
        </Button>
        <Button variant="danger" busy={busy === 'delete'} onClick={() => setAsking('delete')}>
          {t('settings.deleteAccount')}
        </Button>
      </div>
      {asking === 'disable' && (
        <ConfirmDialog
          title={t('settings.disableConfirmTitle')}
          body={t('settings.disableConfirmBody')}
          confirm={t('settings.disableConfirm')}
          onConfirm={() => void end('disable')}
          onCancel={() => setAsking(null)}
        />
      )}
      {asking === 'delete' && (
        <ConfirmDialog
          title={t('settings.deleteConfirmTitle')}
          body={t('settings.deleteConfirmBody')}
          confirm={t('settings.deleteConfirm')}
          onConfirm={() => void end('delete')}
          onCancel={() => setAsking(null)}
        />
      )}
    </section>
  );
}
