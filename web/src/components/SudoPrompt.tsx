import {
  createContext,
  type FormEvent,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useRef,
  useState,
} from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../api/errors.ts';
import type { SudoMethods, SudoProof } from '../api/types.ts';
import { useApp } from '../app-context.tsx';
import { knowsPassword, rememberPassword } from '../lib/password-known.ts';
import { getAssertion } from '../lib/webauthn.ts';
import { Button } from './Button.tsx';
import { ErrorNotice } from './ErrorNotice.tsx';
import { Field } from './Field.tsx';

/** Thrown when the person closes the sudo prompt instead of confirming. */
export class SudoCancelled extends Error {
  constructor() {
    super('sudo cancelled');
    this.name = 'SudoCancelled';
  }
}

type Action<T> = (proof: SudoProof) => Promise<T>;
export interface SudoOptions {
  /**
   * The operation needs sudo mode whatever its body (no form of its own carries the password, and there is no
   * case that needs none, as TOTP turned on as the first factor does): a password account without a second
   * factor is asked for its password before the request.
   */
  always?: boolean;
}
type WithSudo = <T>(action: Action<T>, options?: SudoOptions) => Promise<T>;

const SudoContext = createContext<WithSudo | null>(null);

/**
 * `withSudo(action)` runs a sudo-gated action; when it answers `SUDO_MODE_REQUIRED` a dialog asks for one of
 * the methods the error lists (password, TOTP or backup code, passkey), then the action runs again with the
 * proof. A minted proof (response header) is kept by the HTTP client for the next 5 minutes. An account with a
 * second factor and no unexpired proof is asked first (its methods from `GET /users/@me/sudo/mfa-methods`), and
 * so is an account without one that this browser knows has a password, for an `always` operation (it needs
 * the password every time: no proof lasts for it), so no request is refused (docs/mfa-and-sudo.md#sudo-mode).
 */
export function useSudo(): WithSudo {
  const value = useContext(SudoContext);
  if (!value) throw new Error('useSudo outside <SudoProvider>');
  return value;
}

interface Pending {
  methods: SudoMethods;
  // biome-ignore lint/suspicious/noExplicitAny: the pending action's result type is erased while the dialog is open
  run: Action<any>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export function SudoProvider({ children }: { children: ReactNode }) {
  const { api, user } = useApp();
  const [pending, setPending] = useState<Pending | null>(null);
  const withSudo = useCallback<WithSudo>(
    async (action, options = {}) => {
      const ask = <T,>(methods: SudoMethods) =>
        new Promise<T>((resolve, reject) => {
          setPending({ methods, run: action, resolve: resolve as (value: unknown) => void, reject });
        });
      // Every sudo-gated route wants a proof from an account with a second factor; the methods are asked for
      // afresh (a factor added or removed in another tab). Without one, the server decides: a password
      // account's own form may carry the password, and enabling TOTP as the first factor needs no proof.
      if (user?.mfa_enabled && !api.http.hasSudoProof()) {
        const methods = await api.users.sudoMethods();
        if (methods.has_mfa) return ask({ totp: methods.totp, webauthn: methods.webauthn });
      } else if (user && !user.mfa_enabled && options.always && knowsPassword(user.id)) {
        // An account without a second factor that has a password (learned at sign-in, or from an earlier
        // refusal): the server would refuse the request without it. One without a password passes with nothing.
        return ask({ password: true, totp: false, webauthn: false });
      }
      try {
        return await action({});
      } catch (error) {
        if (!(error instanceof HearthApiError) || error.code !== 'SUDO_MODE_REQUIRED') throw error;
        const methods = (error.body.methods ?? {}) as SudoMethods;
        if (methods.password && user) rememberPassword(user.id);
        return ask(methods);
      }
    },
    [api, user],
  );
  return (
    <SudoContext.Provider value={withSudo}>
      {children}
      {pending && (
        <SudoDialog
          pending={pending}
          close={() => setPending(null)}
          retarget={(methods) => setPending((current) => current && { ...current, methods })}
        />
      )}
    </SudoContext.Provider>
  );
}

function SudoDialog({
  pending,
  close,
  retarget,
}: {
  pending: Pending;
  close: () => void;
  /** The server asked for other methods than the dialog offered (the account changed meanwhile). */
  retarget: (methods: SudoMethods) => void;
}) {
  const { t } = useTranslation();
  const { api } = useApp();
  const dialog = useRef<HTMLDialogElement>(null);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { methods } = pending;

  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  const cancel = () => {
    close();
    pending.reject(new SudoCancelled());
  };

  const attempt = async (proof: () => Promise<SudoProof>) => {
    setBusy(true);
    setError(null);
    try {
      const result = await pending.run(await proof());
      close();
      pending.resolve(result);
    } catch (caught) {
      if (caught instanceof HearthApiError && caught.code === 'SUDO_MODE_REQUIRED')
        retarget((caught.body.methods ?? {}) as SudoMethods);
      setError(caught instanceof DOMException ? new HearthApiError(0, 'PASSKEY_CANCELLED', '', {}) : caught);
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (methods.totp && code) void attempt(async () => ({ mfa_method: 'totp', mfa_code: code.trim() }));
    else if (methods.password) void attempt(async () => ({ password }));
  };

  const passkey = () =>
    attempt(async () => {
      const { response, challenge } = await getAssertion(await api.users.sudoWebauthnOptions());
      return { mfa_method: 'webauthn', webauthn_response: response, webauthn_challenge: challenge };
    });

  const usable = methods.password || methods.totp || methods.webauthn;
  return (
    <dialog
      ref={dialog}
      className="sudo-dialog"
      aria-labelledby="sudo-title"
      onCancel={(event) => {
        event.preventDefault();
        cancel();
      }}
    >
      <form onSubmit={submit}>
        <h2 id="sudo-title">{t('sudo.title')}</h2>
        <p>{usable ? t('sudo.intro') : t('sudo.ssoOnly')}</p>
        {methods.password && (
          <Field
            label={t('sudo.passwordLabel')}
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            required
          />
        )}
        {methods.totp && (
          <Field
            label={t('sudo.totpLabel')}
            inputMode="text"
            autoComplete="one-time-code"
            value={code}
            onChange={(event) => setCode(event.target.value)}
          />
        )}
        <ErrorNotice error={error} />
        <div className="actions">
          {(methods.password || methods.totp) && (
            <Button type="submit" busy={busy}>
              {t('sudo.confirm')}
            </Button>
          )}
          {methods.webauthn && (
            <Button variant="secondary" busy={busy} onClick={() => void passkey()}>
              {t('sudo.passkey')}
            </Button>
          )}
          <Button variant="link" onClick={cancel}>
            {t('common.cancel')}
          </Button>
        </div>
      </form>
    </dialog>
  );
}
