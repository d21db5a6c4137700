import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type GuildSticker, stickerUrl } from '../../../api/guild-admin.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { useGuildAdmin, useRun } from './shared.ts';

/**
 * The guild's stickers, under its emojis (the same permissions open both): upload (name, related emoji, optional
 * description, a PNG, APNG or GIF up to 512 KiB, previewed), and delete.
 */
export function Stickers({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const headingId = useId();
  const fileId = useId();
  const [stickers, setStickers] = useState<GuildSticker[] | null>(null);
  const [name, setName] = useState('');
  const [tags, setTags] = useState('');
  const [description, setDescription] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [fileKey, setFileKey] = useState(0);
  const action = useRun();
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void action.run(async () => setStickers(await admin.stickers(guildId)));
  }, [guildId]);
  useEffect(() => {
    if (!file) return setPreview(null);
    const url = URL.createObjectURL(file);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [file]);

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    await action.run(async () => {
      await admin.createSticker(
        guildId,
        { name: name.trim(), tags: tags.trim(), description: description.trim() },
        file,
      );
      setName('');
      setTags('');
      setDescription('');
      setFile(null);
      setFileKey(fileKey + 1);
      setStickers(await admin.stickers(guildId));
    });
  };
  const remove = async (sticker: GuildSticker) => {
    if (await action.run(() => admin.deleteSticker(guildId, sticker.id))) setStickers(await admin.stickers(guildId));
  };
  return (
    <section aria-labelledby={headingId} className="stickers">
      <h3 id={headingId}>{t('guildSettings.stickers')}</h3>
      <form className="inline-form" onSubmit={upload}>
        <Field
          label={t('guildSettings.stickerName')}
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          minLength={2}
          maxLength={30}
        />
        <Field
          label={t('guildSettings.stickerTags')}
          value={tags}
          onChange={(e) => setTags(e.target.value)}
          required
          maxLength={200}
          hint={t('guildSettings.stickerTagsHint')}
        />
        <Field
          label={t('guildSettings.stickerDescription')}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          maxLength={100}
        />
        <div className="field">
          <label htmlFor={fileId}>{t('guildSettings.stickerImage')}</label>
          <input
            key={fileKey}
            id={fileId}
            type="file"
            required
            accept="image/png,image/apng,image/gif"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </div>
        {preview && (
          <img
            className="sticker-preview"
            src={preview}
            alt={t('guildSettings.stickerPreview')}
            width={80}
            height={80}
          />
        )}
        <Button type="submit" busy={action.busy} disabled={!file}>
          {t('guildSettings.uploadSticker')}
        </Button>
      </form>
      <ErrorNotice error={action.error} />
      {stickers && stickers.length === 0 && <p>{t('guildSettings.noStickers')}</p>}
      {stickers && stickers.length > 0 && (
        <ul className="settings-list" aria-labelledby={headingId}>
          {stickers.map((sticker) => (
            <li key={sticker.id}>
              <img className="sticker" src={stickerUrl(sticker)} alt={sticker.name} width={64} height={64} />
              <span className="grow">
                {sticker.name} <span className="hint">{sticker.tags}</span>
              </span>
              <Button
                variant="danger"
                busy={action.busy}
                aria-label={t('guildSettings.deleteSticker', { name: sticker.name })}
                onClick={() => remove(sticker)}
              >
                {t('guildSettings.delete')}
              </Button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
