import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import en, { type Messages } from './locales/en.ts';

/** Locales the client ships. English is bundled; the others load on demand (one small chunk each). */
export const LOCALES = {
  en: { name: 'English', load: async () => en },
  fr: { name: 'Français', load: async () => (await import('./locales/fr.ts')).default },
} as const satisfies Record<string, { name: string; load: () => Promise<Messages> }>;

export type Locale = keyof typeof LOCALES;

const CHOICE_KEY = 'hearth.locale';

function supported(tag: string | null | undefined): Locale | undefined {
  if (!tag) return undefined;
  const base = tag.toLowerCase().split(/[-_]/)[0] ?? '';
  return base in LOCALES ? (base as Locale) : undefined;
}

/**
 * The locale to show: a choice made with the language picker in this browser, else the account's `locale`,
 * else the browser's preferred languages, else English.
 */
export function pickLocale(accountLocale?: string | null): Locale {
  const chosen = supported(window.localStorage.getItem(CHOICE_KEY));
  if (chosen) return chosen;
  const account = supported(accountLocale);
  if (account) return account;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const match = supported(tag);
    if (match) return match;
  }
  return 'en';
}

export async function setLocale(locale: Locale): Promise<void> {
  if (!i18next.hasResourceBundle(locale, 'translation')) {
    i18next.addResourceBundle(locale, 'translation', await LOCALES[locale].load());
  }
  await i18next.changeLanguage(locale);
  document.documentElement.lang = locale;
}

/** The language picker's choice: remembered in this browser and applied at once. */
export async function chooseLocale(locale: Locale): Promise<void> {
  window.localStorage.setItem(CHOICE_KEY, locale);
  await setLocale(locale);
}

export async function initI18n(): Promise<void> {
  await i18next.use(initReactI18next).init({
    resources: { en: { translation: en } },
    lng: 'en',
    fallbackLng: 'en',
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  await setLocale(pickLocale());
}

export function currentLocale(): Locale {
  return supported(i18next.language) ?? 'en';
}

export { i18next };
