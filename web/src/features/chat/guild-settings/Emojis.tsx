import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { GuildEmoji } from '../../../api/guild-admin.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { Stickers } from './Stickers.tsx';
import { readAsDataUri, useGuildAdmin, useRun } from './shared.ts';

export function emojiUrl(emoji: { id: string | null; animated?: boolean | undefined }): string {
  return `/media/emojis/${emoji.id}.${emoji.animated ? 'gif' : 'png'}`;
}

/** The guild's emojis: upload (name + image, previewed), rename, delete; then its stickers. */
export function Emojis({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const [emojis, setEmojis] = useState<GuildEmoji[] | null>(null);
  const [name, setName] = useState('');
  const [image, setImage] = useState<string | null>(null);
  const [fileKey, setFileKey] = useState(0);
  const action = useRun();
  const fileId = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void action.run(async () => setEmojis(await admin.emojis(guildId)));
  }, [guildId]);

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    if (!image) return;
    await action.run(async () => {
      await admin.createEmoji(guildId, name.trim(), image);
      setName('');
      setImage(null);
      setFileKey(fileKey + 1);
      setEmojis(await admin.emojis(guildId));
    });
  };
  return (
    <div>
      <form className="inline-form" onSubmit={upload}>
        <Field
          label={t('guildSettings.emojiName')}
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          pattern="[A-Za-z0-9_]{2,32}"
          hint={t('guildSettings.emojiNameHint')}
        />
        <div className="field">
          <label htmlFor={fileId}>{t('guildSettings.emojiImage')}</label>
          <input
            key={fileKey}
            id={fileId}
            type="file"
            required
            accept="image/png,image/jpeg,image/gif,image/webp"
            onChange={async (e) => {
              const file = e.target.files?.[0];
              setImage(file ? await readAsDataUri(file) : null);
            }}
          />
        </div>
        {image && (
          <img className="emoji-preview" src={image} alt={t('guildSettings.emojiPreview')} width={32} height={32} />
        )}
        <Button type="submit" busy={action.busy} disabled={!image}>
          {t('guildSettings.uploadEmoji')}
        </Button>
      </form>
      <ErrorNotice error={action.error} />
      {emojis && emojis.length === 0 && <p>{t('guildSettings.noEmojis')}</p>}
      {emojis && emojis.length > 0 && (
        <ul className="settings-list" aria-label={t('guildSettings.emojiList')}>
          {emojis.map((emoji) => (
            <EmojiRow
              key={emoji.id}
              guildId={guildId}
              emoji={emoji}
              onChange={async () => setEmojis(await admin.emojis(guildId))}
            />
          ))}
        </ul>
      )}
      <Stickers guildId={guildId} />
    </div>
  );
}

function EmojiRow({ guildId, emoji, onChange }: { guildId: string; emoji: GuildEmoji; onChange: () => Promise<void> }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const [name, setName] = useState(emoji.name);
  const action = useRun();
  return (
    <li>
      <img className="emoji" src={emojiUrl(emoji)} alt={`:${emoji.name}:`} width={32} height={32} />
      <form
        className="inline-form grow"
        onSubmit={async (event) => {
          event.preventDefault();
          if (await action.run(() => admin.renameEmoji(guildId, emoji.id, name.trim()))) await onChange();
        }}
      >
        <Field
          label={t('guildSettings.renameEmoji', { name: emoji.name })}
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
        />
        <Button type="submit" variant="secondary" busy={action.busy}>
          {t('guildSettings.rename')}
        </Button>
        <Button
          variant="danger"
          busy={action.busy}
          aria-label={t('guildSettings.deleteEmoji', { name: emoji.name })}
          onClick={async () => {
            if (await action.run(() => admin.deleteEmoji(guildId, emoji.id))) await onChange();
          }}
        >
          {t('guildSettings.delete')}
        </Button>
      </form>
      <ErrorNotice error={action.error} />
    </li>
  );
}
