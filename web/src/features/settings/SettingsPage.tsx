import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { chooseLocale, currentLocale, LOCALES, type Locale } from '../../i18n/index.ts';
import { rememberPassword } from '../../lib/password-known.ts';
import { AccountSection } from './AccountSection.tsx';
import { AppsSection } from './AppsSection.tsx';
import { DataSection } from './DataSection.tsx';
import { EmailSection } from './EmailSection.tsx';
import { OverviewSection } from './OverviewSection.tsx';
import { PasskeySection } from './PasskeySection.tsx';
import { PrivacySection } from './PrivacySection.tsx';
import { ProfileSection } from './ProfileSection.tsx';
import { SessionsSection } from './SessionsSection.tsx';
import { TwoFactorSection } from './TwoFactorSection.tsx';

/** The account's language on the server, in the platform's locale names. */
const SERVER_LOCALE: Record<Locale, string> = { en: 'en-US', fr: 'fr' };

/**
 * Account settings: the account at a glance (and signing out), profile, email, language (kept on the account),
 * password, two-factor authentication, passkeys, sessions, privacy (who may send DMs and friend requests), authorised applications, the data export, disabling and deleting the account.
 */
export default function SettingsPage() {
  const { t } = useTranslation();
  const { user } = useApp();
  // A link to a section (`/settings#account-heading`, from the chat's unverified-email banner) scrolls to it
  // and moves the focus there: the browser does so itself only on a full load.
  useEffect(() => {
    const target = window.location.hash ? document.getElementById(window.location.hash.slice(1)) : null;
    if (!target) return;
    target.scrollIntoView();
    if (target.hasAttribute('tabindex')) target.focus();
  }, []);
  if (!user) return null;
  const sections: [string, string][] = [
    ['account-heading', t('settings.accountTitle')],
    ['profile-heading', t('settings.profileTitle')],
    ['email-heading', t('settings.emailTitle')],
    ['language-heading', t('settings.languageTitle')],
    ['password-heading', t('settings.passwordTitle')],
    ['two-factor-heading', t('settings.twoFactorTitle')],
    ['passkeys-heading', t('settings.passkeysTitle')],
    ['sessions-heading', t('settings.sessionsTitle')],
    ['privacy-heading', t('settings.privacyTitle')],
    ['apps-heading', t('settings.appsTitle')],
    ['data-heading', t('settings.dataTitle')],
    ['account-end-heading', t('settings.endTitle')],
  ];
  return (
    <PageLayout title={t('settings.title')} languagePicker={false}>
      <p>
        <Link href="/channels/@me">{t('settings.backToChat')}</Link>
      </p>
      <nav aria-label={t('settings.sectionsNav')} className="settings-nav">
        <ul>
          {sections.map(([id, label]) => (
            <li key={id}>
              <a href={`#${id}`}>{label}</a>
            </li>
          ))}
        </ul>
      </nav>
      <OverviewSection />
      <ProfileSection />
      <EmailSection />
      <LanguageSection />
      <PasswordSection />
      <TwoFactorSection />
      <PasskeySection />
      <SessionsSection />
      <PrivacySection />
      <AppsSection />
      <DataSection />
      <AccountSection />
    </PageLayout>
  );
}

function LanguageSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const id = useId();
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const change = async (locale: Locale) => {
    setError(null);
    setSaved(false);
    await chooseLocale(locale);
    try {
      await api.users.updateSettings({ locale: SERVER_LOCALE[locale] });
      setSaved(true);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    // No aria-labelledby here: a labelled section is found by a label search too, and getByLabel('Language')
    // must find the one select of the page.
    <section>
      <h2 id="language-heading">{t('settings.languageTitle')}</h2>
      <div className="field">
        <label htmlFor={id}>{t('settings.accountLanguage')}</label>
        <select id={id} value={currentLocale()} onChange={(event) => void change(event.target.value as Locale)}>
          {Object.entries(LOCALES).map(([code, { name }]) => (
            <option key={code} value={code} lang={code}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <ErrorNotice error={error} />
      {saved && <Notice tone="success">{t('settings.languageSaved')}</Notice>}
    </section>
  );
}

function PasswordSection() {
  const { t } = useTranslation();
  const { api, signIn } = useApp();
  const withSudo = useSudo();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSaved(false);
    setError(null);
    try {
      // The current password is the sudo proof of an account without a second factor; with one, the
      // prompt asks for it.
      const response = await withSudo((proof) =>
        api.users.update({ new_password: next, ...(current ? { password: current } : {}), ...proof }),
      );
      rememberPassword(response.id);
      // Changing the password signs every session out and answers a new token for this one.
      if (response.token) await signIn({ token: response.token, user_id: response.id, user: response });
      setCurrent('');
      setNext('');
      setSaved(true);
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">{t('settings.passwordTitle')}</h2>
      <form onSubmit={(event) => void submit(event)}>
        <Field
          label={t('settings.currentPassword')}
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(event) => setCurrent(event.target.value)}
        />
        <Field
          label={t('settings.newPassword')}
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          value={next}
          onChange={(event) => setNext(event.target.value)}
        />
        <ErrorNotice error={error} />
        {saved && <Notice tone="success">{t('settings.passwordSaved')}</Notice>}
        <Button type="submit" busy={busy}>
          {t('settings.changePassword')}
        </Button>
      </form>
    </section>
  );
}
