import { type ChangeEvent, type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../../api/errors.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { imageUrl } from '../../lib/media.ts';

/** JSON bodies are limited to 1 MiB, so an image is sent as a data URI of at most this many bytes of file. */
const MAX_SENT_BYTES = 700 * 1024;
const ACCEPTED = 'image/png,image/jpeg,image/gif,image/webp';

type ImageKind = 'avatar' | 'banner';

/** An image the person picked: `undefined` = unchanged, `null` = remove, a string = the new data URI. */
type ImageChoice = string | null | undefined;

function readAsDataUri(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/**
 * The file as a data URI PATCH /users/@me takes: as it is when small enough, otherwise scaled down (at most
 * `maxSide` pixels on its longer side) and re-encoded as WebP. Animated GIFs are only sent as they are.
 */
async function imageDataUri(file: File, maxSide: number): Promise<string> {
  if (file.size <= MAX_SENT_BYTES) return readAsDataUri(file);
  if (file.type === 'image/gif') throw new HearthApiError(413, 'BINARY_TYPE_MAX_SIZE', '', {});
  const bitmap = await createImageBitmap(file);
  const scale = Math.min(1, maxSide / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/webp', 0.9));
  if (!blob || blob.size > MAX_SENT_BYTES) throw new HearthApiError(413, 'BINARY_TYPE_MAX_SIZE', '', {});
  return readAsDataUri(blob);
}

function hexColour(value: number): string {
  return `#${value.toString(16).padStart(6, '0')}`;
}

/** Username, display name, avatar and banner (with a preview before saving), bio, pronouns, accent colour. */
export function ProfileSection() {
  const { t } = useTranslation();
  const { api, user, discovery, refreshUser } = useApp();
  const [username, setUsername] = useState(user?.username ?? '');
  const [displayName, setDisplayName] = useState(user?.global_name ?? '');
  const [bio, setBio] = useState(user?.bio ?? '');
  const [pronouns, setPronouns] = useState(user?.pronouns ?? '');
  const [accent, setAccent] = useState<number | null>(user?.accent_color ?? null);
  const [avatar, setAvatar] = useState<ImageChoice>(undefined);
  const [banner, setBanner] = useState<ImageChoice>(undefined);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const bioId = useId();
  const accentId = useId();
  if (!user) return null;

  // Drawn 96 px square (the avatar) and up to the settings column's 600 px wide (the banner): styles.css.
  const mediaUrl = (kind: ImageKind, hash: string) =>
    imageUrl(discovery.endpoints.media, { kind, userId: user.id, hash }, kind === 'avatar' ? 96 : 600);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSaved(false);
    setError(null);
    const changes: Record<string, unknown> = {};
    const trimmedName = displayName.trim() === '' ? null : displayName.trim();
    if (username !== user.username) changes.username = username;
    if (trimmedName !== (user.global_name ?? null)) changes.global_name = trimmedName;
    if ((bio.trim() || null) !== (user.bio ?? null)) changes.bio = bio.trim() || null;
    if ((pronouns.trim() || null) !== (user.pronouns ?? null)) changes.pronouns = pronouns.trim() || null;
    if (accent !== (user.accent_color ?? null)) changes.accent_color = accent;
    if (avatar !== undefined) changes.avatar = avatar;
    if (banner !== undefined) changes.banner = banner;
    try {
      if (Object.keys(changes).length > 0) await api.users.update(changes);
      await refreshUser();
      setAvatar(undefined);
      setBanner(undefined);
      setSaved(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="profile-heading">
      <h2 id="profile-heading">{t('settings.profileTitle')}</h2>
      <form onSubmit={(event) => void submit(event)}>
        <Field
          label={t('settings.username')}
          hint={t('settings.usernameHint')}
          value={username}
          required
          maxLength={32}
          pattern="[A-Za-z0-9_]{1,32}"
          autoComplete="username"
          onChange={(event) => setUsername(event.target.value)}
        />
        <Field
          label={t('settings.displayName')}
          hint={t('settings.displayNameHint', { username: user.username })}
          value={displayName}
          maxLength={32}
          onChange={(event) => setDisplayName(event.target.value)}
        />
        <ImagePicker
          kind="avatar"
          choice={avatar}
          currentUrl={user.avatar ? mediaUrl('avatar', user.avatar) : null}
          onChoose={setAvatar}
          onError={setError}
        />
        <ImagePicker
          kind="banner"
          choice={banner}
          currentUrl={user.banner ? mediaUrl('banner', user.banner) : null}
          onChoose={setBanner}
          onError={setError}
        />
        <div className="field">
          <label htmlFor={bioId}>{t('settings.bio')}</label>
          <textarea
            id={bioId}
            value={bio}
            maxLength={320}
            rows={4}
            aria-describedby={`${bioId}-hint`}
            onChange={(event) => setBio(event.target.value)}
          />
          <p id={`${bioId}-hint`} className="hint">
            {t('settings.bioHint', { count: 320 - bio.length })}
          </p>
        </div>
        <Field
          label={t('settings.pronouns')}
          value={pronouns}
          maxLength={40}
          onChange={(event) => setPronouns(event.target.value)}
        />
        <div className="field">
          <label htmlFor={accentId}>{t('settings.accentColour')}</label>
          <div className="field-row">
            <input
              id={accentId}
              type="color"
              value={hexColour(accent ?? 0xb4461e)}
              onChange={(event) => setAccent(Number.parseInt(event.target.value.slice(1), 16))}
            />
            <span className="hint">{accent === null ? t('settings.noAccent') : hexColour(accent)}</span>
            {accent !== null && (
              <Button variant="link" onClick={() => setAccent(null)}>
                {t('settings.removeAccent')}
              </Button>
            )}
          </div>
        </div>
        <ErrorNotice error={error} />
        {saved && <Notice tone="success">{t('settings.profileSaved')}</Notice>}
        <Button type="submit" busy={busy}>
          {t('settings.saveProfile')}
        </Button>
      </form>
    </section>
  );
}

function ImagePicker({
  kind,
  choice,
  currentUrl,
  onChoose,
  onError,
}: {
  kind: ImageKind;
  choice: ImageChoice;
  currentUrl: string | null;
  onChoose: (choice: ImageChoice) => void;
  onError: (error: unknown) => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const words =
    kind === 'avatar'
      ? {
          label: t('settings.avatar'),
          current: t('settings.currentAvatar'),
          preview: t('settings.avatarPreview'),
          remove: t('settings.removeAvatar'),
          undo: t('settings.undoAvatar'),
        }
      : {
          label: t('settings.banner'),
          current: t('settings.currentBanner'),
          preview: t('settings.bannerPreview'),
          remove: t('settings.removeBanner'),
          undo: t('settings.undoBanner'),
        };
  const pick = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    onError(null);
    try {
      onChoose(await imageDataUri(file, kind === 'avatar' ? 1024 : 1920));
    } catch (caught) {
      onError(caught);
    }
  };
  const shown = choice === undefined ? currentUrl : choice;
  return (
    <div className="field">
      <label htmlFor={id}>{words.label}</label>
      {shown && (
        <img className={`profile-${kind}`} src={shown} alt={choice === undefined ? words.current : words.preview} />
      )}
      {choice === null && <p className="hint">{t('settings.imageWillBeRemoved')}</p>}
      <div className="field-row">
        <input
          id={id}
          type="file"
          accept={ACCEPTED}
          aria-describedby={`${id}-hint`}
          onChange={(event) => void pick(event)}
        />
        {choice !== undefined ? (
          <Button variant="link" onClick={() => onChoose(undefined)}>
            {words.undo}
          </Button>
        ) : (
          currentUrl && (
            <Button variant="link" onClick={() => onChoose(null)}>
              {words.remove}
            </Button>
          )
        )}
      </div>
      <p id={`${id}-hint`} className="hint">
        {t('settings.imageHint')}
      </p>
    </div>
  );
}
