import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Component, Message } from '../../api/chat-types.ts';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { useChatStore } from './context.ts';

/**
 * A bot message's components: rows of buttons (link buttons open their URL) and string selects. A click or a
 * choice is sent as an interaction (type 3); the bot answers with a message, an update of this one, or a modal.
 */
export function MessageComponents({ message, channel }: { message: Message; channel: Channel }) {
  const { t } = useTranslation();
  const store = useChatStore();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (!message.components?.length) return null;
  const send = async (component: Component, values?: string[]) => {
    if (!component.custom_id) return;
    setBusy(component.custom_id);
    setError(null);
    try {
      await store.api.interact({
        type: 3,
        nonce: `${Date.now()}${Math.floor(Math.random() * 1e6)}`.slice(0, 25),
        application_id: message.application_id ?? message.webhook_id ?? message.author.id,
        guild_id: channel.guild_id,
        channel_id: channel.id,
        message_id: message.id,
        message_flags: message.flags ?? 0,
        data: { component_type: component.type, custom_id: component.custom_id, ...(values ? { values } : {}) },
      });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="components">
      {message.components.map((row, rowIndex) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id and never reorder within a version
        <div key={rowIndex} className="component-row">
          {(row.components ?? []).map((component, index) => {
            const key = component.custom_id ?? component.url ?? String(index);
            if (component.type === 2 && component.style === 5 && component.url) {
              return (
                <a
                  key={key}
                  className="component-button link-button"
                  href={component.url}
                  target="_blank"
                  rel="noopener noreferrer"
                >
                  {component.emoji?.name ? `${component.emoji.name} ` : ''}
                  {component.label}
                </a>
              );
            }
            if (component.type === 2) {
              return (
                <button
                  key={key}
                  type="button"
                  className={`component-button style-${component.style ?? 1}`}
                  disabled={component.disabled || busy !== null}
                  aria-busy={busy === component.custom_id || undefined}
                  onClick={() => void send(component)}
                >
                  {component.emoji?.name ? `${component.emoji.name} ` : ''}
                  {component.label}
                </button>
              );
            }
            if (component.type === 3) {
              return (
                <select
                  key={key}
                  aria-label={component.placeholder ?? t('chat.choose')}
                  disabled={component.disabled || busy !== null}
                  defaultValue=""
                  onChange={(event) => void send(component, [event.target.value])}
                >
                  <option value="" disabled>
                    {component.placeholder ?? t('chat.choose')}
                  </option>
                  {(component.options ?? []).map((option) => (
                    <option key={option.value} value={option.value}>
                      {option.label}
                    </option>
                  ))}
                </select>
              );
            }
            return null;
          })}
        </div>
      ))}
      <ErrorNotice error={error} />
    </div>
  );
}
