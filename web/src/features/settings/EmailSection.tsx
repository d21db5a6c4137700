import { type FormEvent, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SudoProof } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { useSudo } from '../../components/SudoPrompt.tsx';
import { useSectionAction } from './use-section-action.ts';

type Step =
  | { kind: 'idle' }
  | { kind: 'original'; ticket: string }
  | { kind: 'new-email'; ticket: string; proof: string }
  | { kind: 'new-code'; ticket: string; proof: string; email: string };

/**
 * The email change (docs/accounts.md): a code to the current address when it is verified, then the new
 * address and the code sent to it, then the change itself. Every step is sudo-gated: an account with a second
 * factor confirms once (the proof lasts 5 minutes); a password-only account has no lasting proof, so the
 * password given at the first prompt is sent again with each later step of this change.
 */
export function EmailSection() {
  const { t } = useTranslation();
  const { api, user, refreshUser } = useApp();
  const withSudo = useSudo();
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const [code, setCode] = useState('');
  const [newEmail, setNewEmail] = useState('');
  const { busy, message, setMessage, error, run } = useSectionAction();
  const password = useRef<SudoProof>({});
  if (!user) return null;

  /** A sudo-gated step; a password the prompt took is remembered for the next steps of this change. */
  const gated = <T,>(action: (proof: SudoProof) => Promise<T>) =>
    withSudo(
      (proof) => {
        const sent = proof.password ? proof : { ...password.current, ...proof };
        return action(sent).then((result) => {
          if (proof.password) password.current = { password: proof.password };
          return result;
        });
      },
      { always: !password.current.password },
    );

  const reset = () => {
    setStep({ kind: 'idle' });
    setCode('');
    setNewEmail('');
    password.current = {};
  };

  const start = () =>
    run('start', async () => {
      const started = await gated((proof) => api.emailChange.start(proof));
      if (started.require_original) setStep({ kind: 'original', ticket: started.ticket });
      else setStep({ kind: 'new-email', ticket: started.ticket, proof: started.original_proof ?? '' });
    });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (step.kind === 'original') {
      void run('submit', async () => {
        const { original_proof } = await gated((proof) =>
          api.emailChange.verifyOriginal(step.ticket, code.trim(), proof),
        );
        setCode('');
        setStep({ kind: 'new-email', ticket: step.ticket, proof: original_proof });
      });
    } else if (step.kind === 'new-email') {
      void run('submit', async () => {
        const sent = await gated((proof) =>
          api.emailChange.requestNew(step.ticket, newEmail.trim(), step.proof, proof),
        );
        setStep({ kind: 'new-code', ticket: sent.ticket, proof: step.proof, email: sent.new_email });
      });
    } else if (step.kind === 'new-code') {
      void run('submit', async () => {
        const { email_token } = await gated((proof) =>
          api.emailChange.verifyNew(step.ticket, code.trim(), step.proof, proof),
        );
        await gated((proof) => api.emailChange.apply(email_token, proof));
        reset();
        await refreshUser();
        setMessage(t('settings.emailChanged', { email: step.email }));
      });
    }
  };

  const resend = () =>
    run('resend', async () => {
      if (step.kind === 'original') await api.emailChange.resendOriginal(step.ticket);
      else if (step.kind === 'new-code') await api.emailChange.resendNew(step.ticket);
      setMessage(t('settings.emailCodeResent'));
    });

  return (
    <section aria-labelledby="email-heading">
      <h2 id="email-heading">{t('settings.emailTitle')}</h2>
      <p>
        {user.email
          ? t(user.verified ? 'settings.emailCurrentVerified' : 'settings.emailCurrentUnverified', {
              email: user.email,
            })
          : t('settings.emailNone')}
      </p>
      {message && <Notice tone="success">{message}</Notice>}
      <ErrorNotice error={error} />
      {step.kind === 'idle' ? (
        <Button variant="secondary" busy={busy === 'start'} onClick={() => void start()}>
          {t('settings.emailChange')}
        </Button>
      ) : (
        <form onSubmit={submit}>
          {(step.kind === 'original' || step.kind === 'new-code') && (
            // The code mailed to the current address, then the one mailed to the new address (never both at once).
            <Field
              label={
                step.kind === 'original'
                  ? t('settings.emailOriginalCode', { email: user.email ?? '' })
                  : t('settings.emailNewCode', { email: step.email })
              }
              hint={t('settings.emailCodeHint')}
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              maxLength={12}
              value={code}
              onChange={(event) => setCode(event.target.value)}
            />
          )}
          {step.kind === 'new-email' && (
            <Field
              label={t('settings.emailNew')}
              type="email"
              autoComplete="email"
              required
              value={newEmail}
              onChange={(event) => setNewEmail(event.target.value)}
            />
          )}
          <div className="actions">
            <Button type="submit" busy={busy === 'submit'}>
              {step.kind === 'new-email' ? t('settings.emailSendCode') : t('settings.emailVerifyCode')}
            </Button>
            {step.kind !== 'new-email' && (
              <Button variant="secondary" busy={busy === 'resend'} onClick={() => void resend()}>
                {t('settings.emailResend')}
              </Button>
            )}
            <Button variant="link" onClick={reset}>
              {t('common.cancel')}
            </Button>
          </div>
        </form>
      )}
    </section>
  );
}
