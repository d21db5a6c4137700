import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ChatApi } from '../../api/chat.ts';
import type { Invite } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { guildIcon } from '../../lib/media.ts';
import { useLocation } from '../../shell/router.tsx';

/** /invite/{code}: who invites you where; signed out it leads through register or sign-in and back here. */
export default function InvitePage() {
  const { t } = useTranslation();
  const { api, user, navigate } = useApp();
  const location = useLocation();
  const code = decodeURIComponent(location.pathname.split('/')[2] ?? '');
  const chat = new ChatApi(api.http);
  const [invite, setInvite] = useState<Invite | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: one fetch per code
  useEffect(() => {
    chat.invite(code).then(setInvite, setError);
  }, [code]);
  const next = encodeURIComponent(location.pathname);
  const accept = async () => {
    setBusy(true);
    setError(null);
    try {
      const joined = await chat.acceptInvite(code);
      navigate(`/channels/${joined.guild?.id ?? joined.guild_id}/${joined.channel?.id ?? ''}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <PageLayout
      title={invite?.guild ? t('chat.inviteTitle', { name: invite.guild.name }) : t('chat.inviteTitleUnknown')}
    >
      {!invite && !error && <p role="status">{t('app.loading')}</p>}
      {invite && (
        <>
          {invite.guild && (
            // The guild's name is the page's heading: its picture (or initials) beside it is decorative.
            <p className="invite-guild">
              <Avatar source={guildIcon(invite.guild)} name={invite.guild.name} size={64} />
            </p>
          )}
          <p>
            {invite.inviter
              ? t('chat.invitedBy', { name: invite.inviter.global_name ?? invite.inviter.username })
              : t('chat.invited')}
          </p>
          {invite.member_count !== undefined && <p>{t('chat.memberCount', { count: invite.member_count })}</p>}
          {user ? (
            <Button onClick={accept} busy={busy}>
              {t('chat.acceptInvite')}
            </Button>
          ) : (
            <>
              <p>{t('chat.inviteSignedOut')}</p>
              <p className="actions">
                <Link href={`/register?next=${next}`} className="button primary">
                  {t('common.register')}
                </Link>{' '}
                <Link href={`/login?next=${next}`}>{t('common.signIn')}</Link>
              </p>
            </>
          )}
        </>
      )}
      <ErrorNotice error={error} />
    </PageLayout>
  );
}
