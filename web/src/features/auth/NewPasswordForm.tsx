import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../../api/errors.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { fieldSentence } from '../../components/error-sentence.ts';
import { Field } from '../../components/Field.tsx';

interface NewPasswordFormProps {
  password: string;
  onPasswordChange: (password: string) => void;
  onSubmit: (event: FormEvent) => void;
  busy: boolean;
  /** The last refusal: a password field error shows under the field, anything else above the button. */
  error: unknown;
  submitLabel: string;
}

/** The one-field form that sets a new password from an emailed link (password reset, email revert). */
export function NewPasswordForm({
  password,
  onPasswordChange,
  onSubmit,
  busy,
  error,
  submitLabel,
}: NewPasswordFormProps) {
  const { t } = useTranslation();
  const passwordError = error instanceof HearthApiError ? fieldSentence(t, error.fieldCodes(), 'password') : undefined;
  return (
    <form onSubmit={onSubmit} noValidate>
      <Field
        label={t('common.newPassword')}
        hint={t('register.passwordHint')}
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        value={password}
        onChange={(event) => onPasswordChange(event.target.value)}
        error={passwordError}
      />
      <ErrorNotice error={passwordError ? null : error} />
      <Button type="submit" busy={busy}>
        {submitLabel}
      </Button>
    </form>
  );
}
