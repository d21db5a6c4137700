import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Notice } from './ErrorNotice.tsx';

/**
 * A secret shown once (client secret, bot token, Admin API key): a labelled read-only field, a copy button named after it,
 * and a sentence saying it will not be shown again.
 */
export function SecretReveal({ label, value }: { label: string; value: string }) {
  const { t } = useTranslation();
  const id = useId();
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div className="secret">
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <div className="field-row">
          <input id={id} readOnly value={value} spellCheck={false} onFocus={(event) => event.target.select()} />
          <button type="button" className="secondary" onClick={() => void copy()}>
            {t('secret.copy', { what: label.toLowerCase() })}
          </button>
        </div>
        <p className="hint">{t('secret.shownOnce')}</p>
      </div>
      {copied === 'yes' && <Notice tone="success">{t('secret.copied')}</Notice>}
      {copied === 'failed' && <Notice>{t('secret.copyFailed')}</Notice>}
    </div>
  );
}
