import { type InputHTMLAttributes, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';

interface FieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> {
  label: string;
  hint?: string;
  /** A sentence shown under the field and announced with it. */
  error?: string | undefined;
}

/** A labelled input: visible `<label>`, hint and error tied to the input with aria-describedby. */
export function Field({ label, hint, error, type = 'text', ...input }: FieldProps) {
  const id = useId();
  const { t } = useTranslation();
  const [revealed, setRevealed] = useState(false);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  const isPassword = type === 'password';
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className={isPassword ? 'field-row' : undefined}>
        <input
          id={id}
          type={isPassword && revealed ? 'text' : type}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          {...input}
        />
        {isPassword && (
          // Named by its (hidden) text, not aria-label: a label finder (getByLabel('Password')) must find the
          // field alone, not this button too.
          <button type="button" className="ghost" aria-pressed={revealed} onClick={() => setRevealed(!revealed)}>
            <span aria-hidden="true">{revealed ? '🙈' : '👁'}</span>
            <span className="visually-hidden">{revealed ? t('common.hidePassword') : t('common.showPassword')}</span>
          </button>
        )}
      </div>
      {hint && (
        <p id={hintId} className="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={errorId} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}
