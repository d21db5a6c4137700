import { type ReactNode, useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { LanguagePicker } from './LanguagePicker.tsx';

/**
 * Every page's frame: a banner, one `<main>` with exactly one `<h1>` (the page's title, also the tab title)
 * and the language picker in the footer. `narrow` pages (the sign-in family) sit in a centred card.
 */
export function PageLayout({
  title,
  children,
  narrow = true,
  languagePicker = true,
}: {
  title: string;
  children: ReactNode;
  narrow?: boolean;
  /** Off where the page has its own language control (settings), so one "Language" field is on the page. */
  languagePicker?: boolean;
}) {
  const { t } = useTranslation();
  useEffect(() => {
    document.title = `${title} · ${t('app.name')}`;
  }, [title, t]);
  return (
    <div className="page">
      <a className="skip-link" href="#main">
        {t('app.skipToContent')}
      </a>
      <header className="banner">
        <span className="brand">
          <svg viewBox="0 0 32 32" width="28" height="28" focusable="false" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="#b4461e" />
            <path d="M16 5c3 5 8 8 8 14a8 8 0 0 1-16 0c0-4 2-6 4-8 0 3 1 5 3 5-1-4 0-8 1-11z" fill="#fff3e6" />
          </svg>
          {t('app.name')}
        </span>
      </header>
      <main id="main" tabIndex={-1} className={narrow ? 'card' : 'wide'}>
        <h1>{title}</h1>
        {children}
      </main>
      {languagePicker && (
        <footer className="footer">
          <LanguagePicker />
        </footer>
      )}
    </div>
  );
}
