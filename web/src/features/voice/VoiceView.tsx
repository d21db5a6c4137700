import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type Channel, ChannelType } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { useChat } from '../chat/context.ts';
import { useGuildAdmin } from '../chat/guild-settings/shared.ts';
import { has, P } from '../chat/permissions.ts';
import {
  leaveCall,
  loadSettings,
  loadVolumes,
  saveSettings,
  saveVolume,
  startCall,
  useCall,
  useMediaFailedIn,
  useVoiceStates,
} from './call.ts';
import {
  type ConnectionQuality,
  keyName,
  sendableVideoCodecs,
  type VideoCodec,
  type VoiceSettings,
} from './voice-connection.ts';
import type { VoiceState } from './voice-states.ts';
import './voice.css';

/** A voice channel: who is in it and who speaks, Join, and once joined the call's controls and media. */
export function VoiceView({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  const { gateway } = useApp();
  const store = useChat();
  const states = useVoiceStates(gateway);
  const call = useCall();
  const [error, setError] = useState<string | null>(null);
  const guildId = channel.guild_id ?? '';
  const mediaFailed = useMediaFailedIn(guildId, channel.id);
  const here = states.inChannel(guildId, channel.id);
  const inThisCall = call?.guildId === guildId && call.channelId === channel.id ? call : null;
  const permissions = store.permissions(channel);
  const canConnect = has(permissions, P.CONNECT);
  // Server mute, deafen and move are guild-wide permissions (the server checks them on the member PATCH).
  const guildPermissions = store.permissions(undefined, guildId);
  const moderation = {
    mute: has(guildPermissions, P.MUTE_MEMBERS),
    deafen: has(guildPermissions, P.DEAFEN_MEMBERS),
    move: has(guildPermissions, P.MOVE_MEMBERS),
  };
  const canModerate = moderation.mute || moderation.deafen || moderation.move;
  const volumes = loadVolumes();
  const selfId = store.me;

  async function join() {
    setError(null);
    try {
      await startCall(gateway, guildId, channel.id, has(permissions, P.USE_VAD));
    } catch (e) {
      setError(t('voice.failed', { reason: (e as Error).message }));
    }
  }

  return (
    <section className="voice-view" aria-label={t('voice.region')}>
      <h2 className="voice-heading">{t('voice.inChannel')}</h2>
      {here.length === 0 ? (
        <p className="voice-empty">{t('voice.empty')}</p>
      ) : (
        <ul className="voice-members">
          {here.map((state) => {
            const speaking = inThisCall?.speaking.has(state.user_id) ?? false;
            return (
              <li
                key={state.user_id}
                className={speaking ? 'voice-member speaking' : 'voice-member'}
                data-user-id={state.user_id}
              >
                <Avatar
                  source={store.avatarOf(state.user_id, guildId)}
                  name={store.displayName(state.user_id, guildId)}
                  size={24}
                />
                <span className="voice-name">{store.displayName(state.user_id, guildId)}</span>
                {speaking && <span className="voice-badge">{t('voice.speaking')}</span>}
                {state.mute && <span className="voice-badge">{t('voice.serverMuted')}</span>}
                {state.deaf && <span className="voice-badge">{t('voice.serverDeafened')}</span>}
                {state.self_deaf ? (
                  <span className="voice-badge">{t('voice.deafenedBadge')}</span>
                ) : (
                  state.self_mute && <span className="voice-badge">{t('voice.mutedBadge')}</span>
                )}
                {inThisCall && state.user_id !== selfId && (
                  <VolumeSlider
                    userId={state.user_id}
                    name={store.displayName(state.user_id, guildId)}
                    percent={volumes[state.user_id] ?? 100}
                  />
                )}
                {canModerate && (
                  <ModeratorMenu channel={channel} state={state} allowed={moderation} onError={setError} />
                )}
              </li>
            );
          })}
        </ul>
      )}
      {error && <p role="alert">{error}</p>}
      {mediaFailed && !call && <p role="alert">{t('voice.mediaFailed')}</p>}
      {call && !inThisCall && call.guildId === guildId && call.channelId !== channel.id && (
        <p className="voice-elsewhere">
          {t('voice.connectedElsewhere', {
            channel: store.channelLabel(store.channels.get(call.channelId) ?? { ...channel, name: '…' }),
          })}
        </p>
      )}
      {inThisCall ? (
        <CallControls />
      ) : canConnect ? (
        <button type="button" className="voice-join" onClick={() => void join()}>
          {call && call.channelId === channel.id ? t('voice.joining') : t('voice.join')}
        </button>
      ) : (
        <p>{t('voice.noConnect')}</p>
      )}
    </section>
  );
}

/** A participant's playback volume, 0–200 %, remembered per user (docs/web.md#voice). */
export function VolumeSlider({ userId, name, percent }: { userId: string; name: string; percent: number }) {
  const { t } = useTranslation();
  return (
    <label className="voice-volume">
      <span className="visually-hidden">{t('voice.volumeOf', { name })}</span>
      <input
        type="range"
        min={0}
        max={200}
        step={5}
        value={percent}
        aria-valuetext={`${percent} %`}
        onChange={(e) => saveVolume(userId, Number(e.target.value))}
      />
      <span aria-hidden="true">{percent} %</span>
    </label>
  );
}

/** The local connection's quality: a word and bars, with the figures in the accessible label. */
function QualityIndicator({ quality }: { quality: ConnectionQuality | null }) {
  const { t } = useTranslation();
  if (!quality) return null;
  const level = t(`voice.quality.${quality.level}`);
  const label = t('voice.qualityLabel', { level, rtt: quality.rttMs, loss: quality.lossPercent });
  return (
    <p className={`voice-quality ${quality.level}`} data-quality={quality.level}>
      <span role="img" aria-label={label} title={label}>
        <span className="voice-quality-bars" aria-hidden="true">
          <span />
          <span />
          <span />
        </span>
        <span aria-hidden="true">{t('voice.qualityShort', { level })}</span>
      </span>
    </p>
  );
}

/**
 * A participant's moderation menu (docs/web.md#voice): server mute, server deafen, move to another voice channel,
 * disconnect — each `PATCH /guilds/{id}/members/{uid}`; the list updates from the VOICE_STATE_UPDATE that follows.
 */
function ModeratorMenu({
  channel,
  state,
  allowed,
  onError,
}: {
  channel: Channel;
  state: VoiceState;
  allowed: { mute: boolean; deafen: boolean; move: boolean };
  onError: (message: string | null) => void;
}) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const opener = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  // The WAI-ARIA menu pattern: opening puts the focus on the first item, arrows move through the items, Escape
  // closes and gives the focus back to the button, Tab closes and moves on.
  useEffect(() => {
    if (open) menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
  }, [open]);
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) opener.current?.focus();
  };
  const guildId = channel.guild_id ?? '';
  const name = store.displayName(state.user_id, guildId);
  const destinations = allowed.move
    ? store.guildChannels(guildId).filter((c) => c.type === ChannelType.Voice && c.id !== state.channel_id)
    : [];

  async function act(body: { mute?: boolean; deaf?: boolean; channel_id?: string | null }) {
    close(true);
    onError(null);
    try {
      await admin.editMember(guildId, state.user_id, body);
    } catch (e) {
      onError(t('voice.moderationFailed', { name, reason: (e as Error).message }));
    }
  }

  return (
    <span className="voice-moderate">
      <button
        ref={opener}
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        aria-label={t('voice.moderate', { name })}
        onClick={() => setOpen(!open)}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' && !open) {
            e.preventDefault();
            setOpen(true);
          }
        }}
      >
        ⋯
      </button>
      {open && (
        <div
          id={menuId}
          role="menu"
          aria-label={t('voice.moderate', { name })}
          className="voice-menu"
          tabIndex={-1}
          ref={menu}
          onKeyDown={(e) => {
            const items = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
            const at = items.indexOf(document.activeElement as HTMLElement);
            const focus = (index: number) => items[(index + items.length) % items.length]?.focus();
            if (e.key === 'Escape') {
              e.preventDefault();
              close(true);
            } else if (e.key === 'Tab') close(false);
            else if (e.key === 'ArrowDown') {
              e.preventDefault();
              focus(at + 1);
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              focus(at - 1);
            } else if (e.key === 'Home') {
              e.preventDefault();
              focus(0);
            } else if (e.key === 'End') {
              e.preventDefault();
              focus(items.length - 1);
            }
          }}
        >
          {allowed.mute && (
            <button type="button" role="menuitem" tabIndex={-1} onClick={() => void act({ mute: !state.mute })}>
              {state.mute ? t('voice.serverUnmute') : t('voice.serverMute')}
            </button>
          )}
          {allowed.deafen && (
            <button type="button" role="menuitem" tabIndex={-1} onClick={() => void act({ deaf: !state.deaf })}>
              {state.deaf ? t('voice.serverUndeafen') : t('voice.serverDeafen')}
            </button>
          )}
          {destinations.map((c) => (
            <button
              key={c.id}
              type="button"
              role="menuitem"
              tabIndex={-1}
              onClick={() => void act({ channel_id: c.id })}
            >
              {t('voice.moveTo', { channel: store.channelLabel(c) })}
            </button>
          ))}
          {allowed.move && (
            <button type="button" role="menuitem" tabIndex={-1} onClick={() => void act({ channel_id: null })}>
              {t('voice.disconnect')}
            </button>
          )}
        </div>
      )}
    </span>
  );
}

/** Codec names as people know them (not translated). */
const VIDEO_CODEC_NAMES: Record<VideoCodec, string> = { VP8: 'VP8', H264: 'H.264' };

export function CallControls() {
  const { t } = useTranslation();
  const store = useChat();
  const call = useCall();
  const [settings, setSettings] = useState<VoiceSettings>(loadSettings);
  const [devices, setDevices] = useState<MediaDeviceInfo[]>([]);
  // The stream shown large (its transceiver mid); the others stay as thumbnails beside it.
  const [pinned, setPinned] = useState<string | null>(null);

  useEffect(() => {
    void navigator.mediaDevices?.enumerateDevices().then(setDevices);
  }, []);

  if (!call) return null;
  const update = (next: VoiceSettings) => {
    setSettings(next);
    saveSettings(next);
    void call.setInput(next);
  };
  const updateMode = (next: VoiceSettings) => {
    setSettings(next);
    saveSettings(next);
    call.setMode(next);
  };
  const inputs = devices.filter((d) => d.kind === 'audioinput');
  const videoCodecs = sendableVideoCodecs();
  const outputs = devices.filter((d) => d.kind === 'audiooutput');
  const media = [...call.remote.entries()];
  const volumes = loadVolumes();
  const videos = media
    .filter(([, m]) => m.kind !== 'audio')
    .map(([mid, m]) => ({
      mid,
      stream: m.stream,
      label: t(m.kind === 'screen' ? 'voice.screenOf' : 'voice.video', {
        name: store.displayName(m.userId, call.guildId ?? undefined),
      }),
    }));
  // A pinned stream that ended unpins itself.
  const stage = videos.find((v) => v.mid === pinned);
  const thumbnails = videos.filter((v) => v !== stage);
  const togglePin = (mid: string) => setPinned((current) => (current === mid ? null : mid));

  return (
    <div className="voice-call">
      <p className="voice-status" role="status">
        {call.state === 'connected' ? t('voice.connected') : t('voice.connecting')}
      </p>
      <QualityIndicator quality={call.quality} />
      {call.pushToTalk && (
        <p className="voice-ptt-state">
          {call.talking ? t('voice.transmitting') : t('voice.holdToTalk', { key: keyName(call.pushToTalkKey) })}
        </p>
      )}
      <div className="voice-controls">
        <button type="button" aria-pressed={call.selfMute} onClick={() => call.setMute(!call.selfMute)}>
          {call.selfMute ? t('voice.unmute') : t('voice.mute')}
        </button>
        <button type="button" aria-pressed={call.selfDeaf} onClick={() => call.setDeaf(!call.selfDeaf)}>
          {call.selfDeaf ? t('voice.undeafen') : t('voice.deafen')}
        </button>
        <button type="button" aria-pressed={call.camera !== null} onClick={() => void call.toggleCamera()}>
          {call.camera ? t('voice.cameraOff') : t('voice.cameraOn')}
        </button>
        <button type="button" aria-pressed={call.screen !== null} onClick={() => void call.toggleScreen()}>
          {call.screen ? t('voice.stopSharing') : t('voice.shareScreen')}
        </button>
        <button type="button" className="voice-leave" onClick={() => leaveCall()}>
          {t('voice.leave')}
        </button>
      </div>
      <div className="voice-settings">
        <label>
          {t('voice.input')}
          <select
            value={settings.inputDeviceId}
            onChange={(e) => update({ ...settings, inputDeviceId: e.target.value })}
          >
            <option value="">{t('voice.defaultDevice')}</option>
            {inputs.map((d) => (
              <option key={d.deviceId} value={d.deviceId}>
                {d.label || d.deviceId}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('voice.output')}
          <select
            value={settings.outputDeviceId}
            onChange={(e) => {
              const next = { ...settings, outputDeviceId: e.target.value };
              setSettings(next);
              saveSettings(next);
            }}
          >
            <option value="">{t('voice.defaultDevice')}</option>
            {outputs.map((d) => (
              <option key={d.deviceId} value={d.deviceId}>
                {d.label || d.deviceId}
              </option>
            ))}
          </select>
        </label>
        <fieldset className="voice-mode">
          <legend>{t('voice.inputMode')}</legend>
          <label>
            <input
              type="radio"
              name="voice-input-mode"
              checked={!call.pushToTalk}
              disabled={call.pushToTalk && settings.inputMode !== 'pushToTalk'}
              onChange={() => updateMode({ ...settings, inputMode: 'voiceActivity' })}
            />
            {t('voice.voiceActivity')}
          </label>
          <label>
            <input
              type="radio"
              name="voice-input-mode"
              checked={call.pushToTalk}
              onChange={() => updateMode({ ...settings, inputMode: 'pushToTalk' })}
            />
            {t('voice.pushToTalk')}
          </label>
          {call.pushToTalk && settings.inputMode !== 'pushToTalk' && <p>{t('voice.vadNotAllowed')}</p>}
          {!call.pushToTalk && (
            <>
              <label>
                <input
                  type="checkbox"
                  checked={settings.sensitivityAuto}
                  onChange={(e) => updateMode({ ...settings, sensitivityAuto: e.target.checked })}
                />
                {t('voice.sensitivityAuto')}
              </label>
              <label>
                {t('voice.sensitivity')}
                <input
                  type="range"
                  min={-100}
                  max={0}
                  step={1}
                  value={settings.sensitivityDb}
                  disabled={settings.sensitivityAuto}
                  aria-valuetext={`${settings.sensitivityDb} dB`}
                  onChange={(e) => updateMode({ ...settings, sensitivityDb: Number(e.target.value) })}
                />
                <span aria-hidden="true">{settings.sensitivityDb} dB</span>
              </label>
              {!settings.sensitivityAuto && (
                <span className="voice-gate">{call.gateOpen ? t('voice.gateOpen') : t('voice.gateClosed')}</span>
              )}
            </>
          )}
          {call.pushToTalk && (
            <label>
              {t('voice.pushToTalkKey')}
              <input
                type="text"
                readOnly
                className="voice-ptt-key"
                value={keyName(settings.pushToTalkKey)}
                aria-description={t('voice.pushToTalkKeyHint')}
                onKeyDown={(e) => {
                  // Tab still moves focus; any other key becomes the binding.
                  if (e.key === 'Tab' || e.key === 'Shift') return;
                  e.preventDefault();
                  updateMode({ ...settings, pushToTalkKey: e.code });
                }}
              />
            </label>
          )}
        </fieldset>
        <label>
          <input
            type="checkbox"
            checked={settings.echoCancellation}
            onChange={(e) => update({ ...settings, echoCancellation: e.target.checked })}
          />
          {t('voice.echoCancellation')}
        </label>
        <label>
          <input
            type="checkbox"
            checked={settings.noiseSuppression}
            onChange={(e) => update({ ...settings, noiseSuppression: e.target.checked })}
          />
          {t('voice.noiseSuppression')}
        </label>
        {videoCodecs.length > 1 && (
          <label>
            {t('voice.videoCodec')}
            <select
              value={settings.videoCodec}
              onChange={(e) => {
                const next = { ...settings, videoCodec: e.target.value as VideoCodec };
                setSettings(next);
                saveSettings(next);
                void call.setVideoCodec(next);
              }}
            >
              {videoCodecs.map((codec) => (
                <option key={codec} value={codec}>
                  {VIDEO_CODEC_NAMES[codec]}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <div className="voice-media">
        {media.map(([mid, m]) =>
          m.kind === 'audio' ? (
            <RemoteAudio
              key={mid}
              userId={m.userId}
              stream={m.stream}
              muted={call.selfDeaf}
              sinkId={settings.outputDeviceId}
              percent={volumes[m.userId] ?? 100}
            />
          ) : null,
        )}
      </div>
      {videos.length > 0 && (
        <div className={stage ? 'voice-videos has-stage' : 'voice-videos'}>
          {stage && (
            <VideoTile
              key={stage.mid}
              stream={stage.stream}
              label={stage.label}
              pinned
              onTogglePin={() => togglePin(stage.mid)}
            />
          )}
          <div className="voice-thumbnails">
            {thumbnails.map((v) => (
              <VideoTile
                key={v.mid}
                stream={v.stream}
                label={v.label}
                pinned={false}
                onTogglePin={() => togglePin(v.mid)}
              />
            ))}
          </div>
        </div>
      )}
    </div>
  );
}

/** One AudioContext for the tab's playback (created on first use, after the Join click). */
let playback: AudioContext | undefined;

/**
 * A participant's audio: the received stream through a GainNode (the per-user volume, 0–2) into the element that
 * plays it, so `setSinkId` still picks the speaker. Chromium feeds a remote WebRTC track to Web Audio only while a
 * media element holds it: a second, muted element does.
 */
function RemoteAudio({
  userId,
  stream,
  muted,
  sinkId,
  percent,
}: {
  userId: string;
  stream: MediaStream;
  muted: boolean;
  sinkId: string;
  percent: number;
}) {
  const ref = useRef<HTMLAudioElement>(null);
  const holder = useRef<HTMLAudioElement>(null);
  const gain = useRef<GainNode | null>(null);
  const percentRef = useRef(percent);
  percentRef.current = percent;
  useEffect(() => {
    const element = ref.current;
    if (!element || !holder.current) return;
    holder.current.srcObject = stream;
    if (typeof AudioContext === 'undefined') {
      element.srcObject = stream;
      void element.play().catch(() => {});
      return;
    }
    playback ??= new AudioContext();
    const context = playback;
    void context.resume().catch(() => {});
    const source = context.createMediaStreamSource(stream);
    const node = context.createGain();
    node.gain.value = percentRef.current / 100;
    const destination = context.createMediaStreamDestination();
    source.connect(node).connect(destination);
    gain.current = node;
    element.dataset.gain = String(node.gain.value);
    element.srcObject = destination.stream;
    void element.play().catch(() => {});
    return () => {
      source.disconnect();
      node.disconnect();
      gain.current = null;
    };
  }, [stream]);
  useEffect(() => {
    const node = gain.current;
    if (!node || !ref.current) return;
    node.gain.value = percent / 100;
    ref.current.dataset.gain = String(node.gain.value);
  }, [percent]);
  useEffect(() => {
    const element = ref.current as (HTMLAudioElement & { setSinkId?: (id: string) => Promise<void> }) | null;
    if (element?.setSinkId && sinkId) void element.setSinkId(sinkId).catch(() => {});
  }, [sinkId]);
  return (
    <>
      <audio ref={holder} muted className="voice-audio" />
      <audio ref={ref} autoPlay muted={muted} className="voice-audio" data-user-id={userId} data-volume={percent} />
    </>
  );
}

/**
 * A camera or screen stream with its Pin toggle (docs/web.md#voice): pinned, it fills the stage above the
 * thumbnails and offers full screen.
 */
function VideoTile({
  stream,
  label,
  pinned,
  onTogglePin,
}: {
  stream: MediaStream;
  label: string;
  pinned: boolean;
  onTogglePin: () => void;
}) {
  const { t } = useTranslation();
  const figure = useRef<HTMLElement>(null);
  return (
    <figure
      ref={figure}
      className={pinned ? 'voice-tile pinned' : 'voice-tile'}
      aria-label={pinned ? t('voice.pinnedStream', { label }) : label}
    >
      <RemoteVideo stream={stream} label={label} />
      <figcaption>
        <span className="voice-tile-label">{label}</span>
        <button type="button" className="ghost small" aria-pressed={pinned} onClick={onTogglePin}>
          {t('voice.pinStream', { label })}
        </button>
        {pinned && (
          <button
            type="button"
            className="ghost small"
            onClick={() =>
              void figure.current
                ?.querySelector('video')
                ?.requestFullscreen?.()
                .catch(() => {})
            }
          >
            {t('voice.fullScreen', { label })}
          </button>
        )}
      </figcaption>
    </figure>
  );
}

function RemoteVideo({ stream, label }: { stream: MediaStream; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.srcObject = stream;
  }, [stream]);
  return <video ref={ref} autoPlay playsInline muted aria-label={label} className="voice-video" />;
}
