import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { chooseLocale, currentLocale, LOCALES, type Locale } from '../i18n/index.ts';

export function LanguagePicker() {
  const { t, i18n } = useTranslation();
  const id = useId();
  return (
    <div className="language-picker">
      <label htmlFor={id}>{t('app.language')}</label>
      <select
        id={id}
        value={currentLocale()}
        data-lang={i18n.language}
        onChange={(event) => void chooseLocale(event.target.value as Locale)}
      >
        {Object.entries(LOCALES).map(([code, { name }]) => (
          <option key={code} value={code} lang={code}>
            {name}
          </option>
        ))}
      </select>
    </div>
  );
}
