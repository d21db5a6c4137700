import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { groupDmIcon, imageUrl } from '../../lib/media.ts';
import { useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { IMAGE_PREVIEW_SIZE, ImageField } from './ImageField.tsx';

/**
 * A group conversation's settings (docs/web.md#pages, docs/chat.md#dm-rules): any member may rename it and set or
 * remove its icon; the server tells everyone with CHANNEL_UPDATE, which redraws the list and the header.
 */
export function GroupDmSettings({ channel, onClose }: { channel: Channel; onClose: () => void }) {
  const { t } = useTranslation();
  const { discovery } = useApp();
  const store = useChat();
  const [name, setName] = useState(channel.name ?? '');
  // undefined: unchanged; a data URI: the picked file; null: removed.
  const [icon, setIcon] = useState<string | null | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const stored = groupDmIcon(channel);
  const preview =
    icon !== undefined ? icon : stored ? imageUrl(discovery.endpoints.media, stored, IMAGE_PREVIEW_SIZE) : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const body: { name?: string; icon?: string | null } = {};
    const trimmed = name.trim();
    if (trimmed && trimmed !== (channel.name ?? '')) body.name = trimmed;
    if (icon !== undefined) body.icon = icon;
    setBusy(true);
    setError(null);
    try {
      if (Object.keys(body).length > 0) await store.api.editGroupDm(channel.id, body);
      onClose();
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <Dialog title={t('chat.groupSettings')} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label={t('chat.groupName')} value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        <ImageField
          text={{
            label: t('chat.groupIcon'),
            preview: t('chat.groupIconPreview'),
            none: t('chat.noGroupIcon'),
            remove: t('chat.removeGroupIcon'),
          }}
          preview={preview}
          onChange={setIcon}
        />
        <ErrorNotice error={error} />
        <div className="dialog-actions">
          <Button type="submit" busy={busy}>
            {t('chat.saveGroup')}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
