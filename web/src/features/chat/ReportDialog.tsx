import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Message } from '../../api/chat-types.ts';
import { REPORT_CATEGORIES, type ReportCategory } from '../../api/types.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { useChatStore } from './context.ts';
import { Dialog } from './Dialog.tsx';

/** Matches the server's bound on a report's description (docs/safety.md). */
const DESCRIPTION_MAX = 1000;

/** "Report message": a reason from the fixed set and optional details, sent to the instance's admins. */
export function ReportDialog({ message, author, onClose }: { message: Message; author: string; onClose: () => void }) {
  const { t } = useTranslation();
  const store = useChatStore();
  const reasonId = useId();
  const detailsId = useId();
  const [category, setCategory] = useState<ReportCategory | ''>('');
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!category) return;
    setBusy(true);
    setError(null);
    try {
      await store.api.reportMessage(message.channel_id, message.id, category, description);
      setSent(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={t('chat.reportTitle', { name: author })} onClose={onClose}>
      {sent ? (
        <>
          <Notice tone="success">{t('chat.reportSent')}</Notice>
          <div className="dialog-actions">
            <button type="button" onClick={onClose}>
              {t('chat.close')}
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={(event) => void submit(event)}>
          <blockquote className="quote-preview">{message.content.slice(0, 300)}</blockquote>
          <div className="field">
            <label htmlFor={reasonId}>{t('chat.reportReason')}</label>
            <select
              id={reasonId}
              value={category}
              required
              onChange={(event) => setCategory(event.target.value as ReportCategory)}
            >
              <option value="">{t('chat.reportReasonPick')}</option>
              {REPORT_CATEGORIES.map((value) => (
                <option key={value} value={value}>
                  {t(`chat.reportCategory.${value}`)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={detailsId}>{t('chat.reportDetails')}</label>
            <textarea
              id={detailsId}
              rows={4}
              maxLength={DESCRIPTION_MAX}
              value={description}
              onChange={(event) => setDescription(event.target.value)}
            />
          </div>
          <ErrorNotice error={error} />
          <div className="dialog-actions">
            <button type="button" className="secondary" onClick={onClose}>
              {t('common.cancel')}
            </button>
            <Button type="submit" busy={busy} disabled={!category}>
              {t('chat.reportSend')}
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
