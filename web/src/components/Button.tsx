import type { ButtonHTMLAttributes } from 'react';
import { useTranslation } from 'react-i18next';

interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  busy?: boolean;
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
}

/** A button that stays named while busy (aria-busy, a "Working…" label) and cannot be double-submitted. */
export function Button({
  busy = false,
  variant = 'primary',
  children,
  disabled,
  type = 'button',
  ...rest
}: ButtonProps) {
  const { t } = useTranslation();
  return (
    <button type={type} className={variant} disabled={disabled || busy} aria-busy={busy || undefined} {...rest}>
      {busy ? t('common.working') : children}
    </button>
  );
}
