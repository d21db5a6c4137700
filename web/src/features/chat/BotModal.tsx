import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';

/** A bot's form (INTERACTION_MODAL_CREATE): its text inputs, submitted as an interaction of type 5. */
export function BotModalDialog() {
  const { t } = useTranslation();
  const store = useChat();
  const modal = store.modal;
  const [values, setValues] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!modal) return null;
  const close = () => {
    store.modal = null;
    setValues({});
    store.changed();
  };
  const inputs = modal.components.flatMap((row) => row.components ?? []).filter((c) => c.type === 4);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const channel = store.channels.get(modal.channel_id);
    try {
      await store.api.interact({
        type: 5,
        nonce: `${Date.now()}${Math.floor(Math.random() * 1e6)}`.slice(0, 25),
        application_id: modal.application.id,
        guild_id: channel?.guild_id,
        channel_id: modal.channel_id,
        data: {
          custom_id: modal.custom_id,
          components: inputs.map((input) => ({
            type: 1,
            components: [{ type: 4, custom_id: input.custom_id, value: values[input.custom_id ?? ''] ?? '' }],
          })),
        },
      });
      close();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={modal.title} onClose={close}>
      <form onSubmit={submit}>
        <p className="hint">{t('chat.formFrom', { name: modal.application.name })}</p>
        {inputs.map((input) => {
          const id = `modal-${input.custom_id}`;
          const extra = input as typeof input & { required?: boolean; max_length?: number; value?: string };
          return (
            <div className="field" key={input.custom_id}>
              <label htmlFor={id}>{input.label}</label>
              {input.style === 2 ? (
                <textarea
                  id={id}
                  required={extra.required ?? true}
                  maxLength={extra.max_length}
                  placeholder={input.placeholder}
                  value={values[input.custom_id ?? ''] ?? extra.value ?? ''}
                  onChange={(e) => setValues({ ...values, [input.custom_id ?? '']: e.target.value })}
                />
              ) : (
                <input
                  id={id}
                  required={extra.required ?? true}
                  maxLength={extra.max_length}
                  placeholder={input.placeholder}
                  value={values[input.custom_id ?? ''] ?? extra.value ?? ''}
                  onChange={(e) => setValues({ ...values, [input.custom_id ?? '']: e.target.value })}
                />
              )}
            </div>
          );
        })}
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy}>
          {t('chat.submit')}
        </Button>
      </form>
    </Dialog>
  );
}
