import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Member } from '../../../api/chat-types.ts';
import { useApp } from '../../../app-context.tsx';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { imageUrl, userAvatar } from '../../../lib/media.ts';
import { useChat } from '../context.ts';
import { IMAGE_PREVIEW_SIZE, ImageField } from '../ImageField.tsx';
import { useGuildAdmin, useRun } from './shared.ts';

/**
 * The viewer's own profile in this server (every member may open it): nickname, avatar and bio shown here
 * instead of the account's. The nickname needs CHANGE_NICKNAME; the server refuses it otherwise.
 */
export function Profile({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const [member, setMember] = useState<Member | null>(null);
  const [nick, setNick] = useState('');
  const [bio, setBio] = useState('');
  const [avatar, setAvatar] = useState<string | null | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const load = useRun();
  const save = useRun();
  const ids = { bio: useId() };

  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void load.run(async () => {
      const mine = await admin.myMember(guildId);
      setMember(mine);
      setNick(mine.nick ?? '');
      setBio(mine.bio ?? '');
    });
  }, [guildId, admin]);

  const { discovery } = useApp();
  // The stored server avatar (not the account's avatar it replaces), at the preview's size.
  const stored = member?.avatar ? userAvatar({ id: store.me }, member, guildId) : null;
  const avatarUrl =
    avatar !== undefined ? avatar : stored ? imageUrl(discovery.endpoints.media, stored, IMAGE_PREVIEW_SIZE) : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const body: { nick?: string | null; avatar?: string | null; bio?: string | null } = {};
    if (nick.trim() !== (member?.nick ?? '')) body.nick = nick.trim() || null;
    if (bio !== (member?.bio ?? '')) body.bio = bio || null;
    if (avatar !== undefined) body.avatar = avatar;
    const ok = await save.run(async () => {
      const updated = await admin.editMyProfile(guildId, body);
      setMember(updated);
      setNick(updated.nick ?? '');
      setBio(updated.bio ?? '');
      setAvatar(undefined);
    });
    setSaved(ok);
  };

  if (!member) return <ErrorNotice error={load.error} />;
  return (
    <form className="guild-form" aria-label={t('guildSettings.profile.form')} onSubmit={submit}>
      <p>{t('guildSettings.profile.intro')}</p>
      <Field
        label={t('guildSettings.profile.nick')}
        value={nick}
        onChange={(e) => setNick(e.target.value)}
        maxLength={32}
      />
      <ImageField
        text={{
          label: t('guildSettings.profile.avatar'),
          preview: t('guildSettings.profile.avatarPreview'),
          none: t('guildSettings.profile.noAvatar'),
          remove: t('guildSettings.profile.removeAvatar'),
        }}
        preview={avatarUrl}
        onChange={setAvatar}
      />
      <div className="field">
        <label htmlFor={ids.bio}>{t('guildSettings.profile.bio')}</label>
        <textarea id={ids.bio} value={bio} maxLength={320} rows={3} onChange={(e) => setBio(e.target.value)} />
      </div>
      <ErrorNotice error={save.error} />
      {saved && <Notice tone="success">{t('guildSettings.saved')}</Notice>}
      <Button type="submit" busy={save.busy}>
        {t('guildSettings.profile.save')}
      </Button>
    </form>
  );
}
