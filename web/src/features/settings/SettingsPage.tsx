import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { chooseLocale, currentLocale, LOCALES, type Locale } from '../../i18n/index.ts';
import { PasskeySection } from '../home/PasskeySection.tsx';

/** The account's language on the server, in the platform's locale names. */
const SERVER_LOCALE: Record<Locale, string> = { en: 'en-US', fr: 'fr' };

/** Account settings: profile, language (kept on the account), password, passkeys; sessions live on `/`. */
export default function SettingsPage() {
  const { t } = useTranslation();
  const { user } = useApp();
  if (!user) return null;
  return (
    <PageLayout title={t('settings.title')}>
      <p>
        <Link href="/channels/@me">{t('settings.backToChat')}</Link> ·{' '}
        <Link href="/">{t('settings.sessionsLink')}</Link>
      </p>
      <ProfileSection />
      <LanguageSection />
      <PasswordSection />
      <PasskeySection />
    </PageLayout>
  );
}

function ProfileSection() {
  const { t } = useTranslation();
  const { api, user } = useApp();
  const [displayName, setDisplayName] = useState(user?.global_name ?? '');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSaved(false);
    setError(null);
    try {
      await api.users.update({ global_name: displayName.trim() === '' ? null : displayName.trim() });
      setSaved(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="profile-heading">
      <h2 id="profile-heading">{t('settings.profileTitle')}</h2>
      <form onSubmit={(event) => void submit(event)}>
        <Field
          label={t('settings.displayName')}
          hint={t('settings.displayNameHint', { username: user?.username ?? '' })}
          value={displayName}
          maxLength={32}
          onChange={(event) => setDisplayName(event.target.value)}
        />
        <ErrorNotice error={error} />
        {saved && <Notice tone="success">{t('settings.profileSaved')}</Notice>}
        <Button type="submit" busy={busy}>
          {t('settings.saveProfile')}
        </Button>
      </form>
    </section>
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
    <section aria-labelledby="language-heading">
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
