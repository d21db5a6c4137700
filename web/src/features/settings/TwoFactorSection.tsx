import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { BackupCode } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { useSudo } from '../../components/SudoPrompt.tsx';
import { useSectionAction } from './use-section-action.ts';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new TOTP secret: 160 random bits (what authenticator apps expect for SHA-1) in base32 without padding. */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Groups of four, easier to type into an app by hand (the server ignores the spaces). */
function grouped(secret: string): string {
  return secret.match(/.{1,4}/g)?.join(' ') ?? secret;
}

/** The key URI authenticator apps read from the QR code (Google's otpauth:// format). */
function keyUri(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: '6', period: '30' });
  return `otpauth://totp/${label}?${query.toString()}`;
}

/** The QR code of `text` as an SVG path (the `qrcode` package, loaded only when someone enrols). */
function QrCode({ text, label }: { text: string; label: string }) {
  const [path, setPath] = useState<{ d: string; size: number } | null>(null);
  useEffect(() => {
    let live = true;
    void import('qrcode').then(({ create }) => {
      const { modules } = create(text, { errorCorrectionLevel: 'M' });
      const quiet = 4;
      let d = '';
      for (let row = 0; row < modules.size; row++) {
        for (let col = 0; col < modules.size; col++) {
          if (modules.get(row, col)) d += `M${col + quiet} ${row + quiet}h1v1h-1z`;
        }
      }
      if (live) setPath({ d, size: modules.size + quiet * 2 });
    });
    return () => {
      live = false;
    };
  }, [text]);
  if (!path) return null;
  // Named by its title rather than aria-label, so a label search for the "Code" field finds only the field.
  return (
    <svg
      className="qr-code"
      role="img"
      viewBox={`0 0 ${path.size} ${path.size}`}
      width="200"
      height="200"
      shapeRendering="crispEdges"
    >
      <title>{label}</title>
      <rect width={path.size} height={path.size} fill="#ffffff" />
      <path d={path.d} fill="#000000" />
    </svg>
  );
}

/** Offers the unused codes as a text file, one per line. */
function downloadCodes(codes: BackupCode[], heading: string): void {
  const text = `${heading}\n\n${codes
    .filter((entry) => !entry.consumed)
    .map((entry) => entry.code)
    .join('\n')}\n`;
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = 'hearth-backup-codes.txt';
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Two-factor authentication: an authenticator app (enrolment with a QR code and the secret as text, a code to
 * confirm, turning it off) and its backup codes (view, regenerate, download).
 */
export function TwoFactorSection() {
  const { t } = useTranslation();
  const { api, user, discovery, refreshUser } = useApp();
  const withSudo = useSudo();
  const [secret, setSecret] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<BackupCode[] | null>(null);
  const { busy, message, setMessage, error, run } = useSectionAction();
  if (!user) return null;
  const totpOn = user.authenticator_types.includes(0);
  const issuer = discovery.app_public.branding.product_name || t('app.name');

  const enable = (event: FormEvent) => {
    event.preventDefault();
    if (!secret) return;
    void run('enable', async () => {
      const result = await withSudo((proof) => api.mfa.enableTotp(secret, code.trim(), proof));
      setSecret(null);
      setCode('');
      setCodes(result.backup_codes);
      setMessage(t('settings.totpEnabled'));
      await refreshUser();
    });
  };

  const disable = () =>
    run('disable', async () => {
      await withSudo((proof) => api.mfa.disableTotp(proof), { always: true });
      setCodes(null);
      setMessage(t('settings.totpDisabled'));
      await refreshUser();
    });

  const loadCodes = (regenerate: boolean) =>
    run(regenerate ? 'regenerate' : 'view', async () => {
      const result = await withSudo((proof) => api.mfa.backupCodes(regenerate, proof), { always: true });
      setCodes(result.backup_codes);
      if (regenerate) setMessage(t('settings.backupRegenerated'));
    });

  return (
    <section aria-labelledby="two-factor-heading">
      <h2 id="two-factor-heading">{t('settings.twoFactorTitle')}</h2>
      <h3>{t('settings.totpTitle')}</h3>
      <p>{totpOn ? t('settings.totpOn') : t('settings.totpOff')}</p>
      {message && <Notice tone="success">{message}</Notice>}
      <ErrorNotice error={error} />
      {!totpOn && !secret && (
        <Button variant="secondary" onClick={() => setSecret(newSecret())}>
          {t('settings.totpSetUp')}
        </Button>
      )}
      {!totpOn && secret && (
        <form onSubmit={enable} className="totp-enrol">
          <p>{t('settings.totpScan')}</p>
          <QrCode text={keyUri(issuer, user.email ?? user.username, secret)} label={t('settings.qrLabel')} />
          <Field
            label={t('settings.totpSecret')}
            hint={t('settings.totpSecretHint')}
            value={grouped(secret)}
            readOnly
            spellCheck={false}
            className="secret"
            onFocus={(event) => event.target.select()}
          />
          <Field
            label={t('signIn.totpLabel')}
            hint={t('signIn.totpHint')}
            inputMode="numeric"
            autoComplete="one-time-code"
            required
            maxLength={8}
            value={code}
            onChange={(event) => setCode(event.target.value)}
          />
          <div className="actions">
            <Button type="submit" busy={busy === 'enable'}>
              {t('settings.totpConfirm')}
            </Button>
            <Button
              variant="link"
              onClick={() => {
                setSecret(null);
                setCode('');
              }}
            >
              {t('common.cancel')}
            </Button>
          </div>
        </form>
      )}
      {totpOn && (
        <>
          <div className="actions">
            <Button variant="danger" busy={busy === 'disable'} onClick={() => void disable()}>
              {t('settings.totpDisable')}
            </Button>
          </div>
          <h3>{t('settings.backupTitle')}</h3>
          <p>{t('settings.backupIntro')}</p>
          <div className="actions">
            <Button variant="secondary" busy={busy === 'view'} onClick={() => void loadCodes(false)}>
              {t('settings.backupShow')}
            </Button>
            <Button variant="secondary" busy={busy === 'regenerate'} onClick={() => void loadCodes(true)}>
              {t('settings.backupRegenerate')}
            </Button>
          </div>
        </>
      )}
      {totpOn && codes && (
        <>
          <ul className="backup-codes" aria-label={t('settings.backupListLabel')}>
            {codes.map((entry) => (
              <li key={entry.code}>
                {entry.consumed ? (
                  <>
                    <del>{entry.code}</del> <span className="hint">{t('settings.backupUsed')}</span>
                  </>
                ) : (
                  <code>{entry.code}</code>
                )}
              </li>
            ))}
          </ul>
          <Button
            variant="secondary"
            onClick={() => downloadCodes(codes, t('settings.backupFileHeading', { product: issuer }))}
          >
            {t('settings.backupDownload')}
          </Button>
        </>
      )}
    </section>
  );
}
