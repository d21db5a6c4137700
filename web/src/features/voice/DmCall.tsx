import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { useChat } from '../chat/context.ts';
import { loadVolumes, startCall, useCall, useVoiceStates } from './call.ts';
import { CallControls, VolumeSlider } from './VoiceView.tsx';
import './voice.css';

/** A DM or group DM's call (docs/voice.md, DM calls): joined in the header, shown under it while it lasts. */
export function DmCallButton({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  const { gateway } = useApp();
  const states = useVoiceStates(gateway);
  const call = useCall();
  const inThisCall = call?.guildId === null && call.channelId === channel.id;
  if (inThisCall) return null;
  const active = states.calls.has(channel.id) || states.inChannel(channel.id, channel.id).length > 0;
  return (
    // Starting a call is an icon as beside the header's others (named and titled); joining a call that is on says so.
    active ? (
      <button type="button" className="ghost small" onClick={() => void startCall(gateway, null, channel.id)}>
        {t('voice.joinCall')}
      </button>
    ) : (
      <button
        type="button"
        className="ghost icon"
        aria-label={t('voice.startCall')}
        title={t('voice.startCall')}
        onClick={() => void startCall(gateway, null, channel.id)}
      >
        <span aria-hidden="true">📞</span>
      </button>
    )
  );
}

/** Who is in the DM's call, and this tab's controls when it is in it. */
export function DmCallPanel({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  const { gateway } = useApp();
  const store = useChat();
  const states = useVoiceStates(gateway);
  const call = useCall();
  const here = states.inChannel(channel.id, channel.id);
  const inThisCall = call?.guildId === null && call.channelId === channel.id ? call : null;
  if (!inThisCall && here.length === 0) return null;
  const volumes = loadVolumes();
  return (
    <section className="voice-view dm-call" aria-label={t('voice.callRegion')}>
      <h2 className="voice-heading">{t('voice.inCall')}</h2>
      <ul className="voice-members">
        {here.map((state) => {
          const speaking = inThisCall?.speaking.has(state.user_id) ?? false;
          return (
            <li
              key={state.user_id}
              className={speaking ? 'voice-member speaking' : 'voice-member'}
              data-user-id={state.user_id}
            >
              <Avatar source={store.avatarOf(state.user_id)} name={store.displayName(state.user_id)} size={24} />
              <span className="voice-name">{store.displayName(state.user_id)}</span>
              {speaking && <span className="voice-badge">{t('voice.speaking')}</span>}
              {state.self_deaf ? (
                <span className="voice-badge">{t('voice.deafenedBadge')}</span>
              ) : (
                state.self_mute && <span className="voice-badge">{t('voice.mutedBadge')}</span>
              )}
              {inThisCall && state.user_id !== store.me && (
                <VolumeSlider
                  userId={state.user_id}
                  name={store.displayName(state.user_id)}
                  percent={volumes[state.user_id] ?? 100}
                />
              )}
            </li>
          );
        })}
      </ul>
      {inThisCall && <CallControls />}
    </section>
  );
}

/** Calls ringing this person, wherever they are in the app: Accept joins (and opens the DM), Decline stops ringing. */
export function IncomingCalls() {
  const { t } = useTranslation();
  const { gateway, navigate } = useApp();
  const store = useChat();
  const states = useVoiceStates(gateway);
  const call = useCall();
  const [declined, setDeclined] = useState<ReadonlySet<string>>(new Set());
  const ringing = [...states.calls.values()].filter(
    (c) =>
      c.ringing.includes(store.me) &&
      !declined.has(`${c.channel_id}:${c.message_id}`) &&
      !(call?.guildId === null && call.channelId === c.channel_id),
  );
  if (ringing.length === 0) return null;
  return (
    <div className="incoming-calls">
      {ringing.map((c) => {
        const caller = states.inChannel(c.channel_id, c.channel_id).find((s) => s.user_id !== store.me);
        const label = t('voice.incomingCall', { name: caller ? store.displayName(caller.user_id) : '' });
        return (
          <section key={c.channel_id} className="incoming-call" aria-label={label}>
            <p role="status">{label}</p>
            <button
              type="button"
              onClick={() => {
                navigate(`/channels/@me/${c.channel_id}`);
                void startCall(gateway, null, c.channel_id);
              }}
            >
              {t('voice.accept')}
            </button>
            <button
              type="button"
              className="ghost"
              onClick={() => {
                setDeclined(new Set([...declined, `${c.channel_id}:${c.message_id}`]));
                void store.api.declineCall(c.channel_id).catch(() => {});
              }}
            >
              {t('voice.decline')}
            </button>
          </section>
        );
      })}
    </div>
  );
}
