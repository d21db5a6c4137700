import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { useChat } from '../chat/context.ts';
import { has, P } from '../chat/permissions.ts';
import { leaveCall, loadSettings, saveSettings, startCall, useCall, useVoiceStates } from './call.ts';
import type { VoiceSettings } from './voice-connection.ts';
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
  const here = states.inChannel(guildId, channel.id);
  const inThisCall = call?.guildId === guildId && call.channelId === channel.id ? call : null;
  const canConnect = has(store.permissions(channel), P.CONNECT);

  async function join() {
    setError(null);
    try {
      await startCall(gateway, guildId, channel.id);
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
                <span className="voice-name">{store.displayName(state.user_id, guildId)}</span>
                {speaking && <span className="voice-badge">{t('voice.speaking')}</span>}
                {state.mute && <span className="voice-badge">{t('voice.serverMuted')}</span>}
                {state.self_deaf ? (
                  <span className="voice-badge">{t('voice.deafenedBadge')}</span>
                ) : (
                  state.self_mute && <span className="voice-badge">{t('voice.mutedBadge')}</span>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {error && <p role="alert">{error}</p>}
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

function CallControls() {
  const { t } = useTranslation();
  const store = useChat();
  const call = useCall();
  const [settings, setSettings] = useState<VoiceSettings>(loadSettings);
  const [devices, setDevices] = useState<MediaDeviceInfo[]>([]);

  useEffect(() => {
    void navigator.mediaDevices?.enumerateDevices().then(setDevices);
  }, []);

  if (!call) return null;
  const update = (next: VoiceSettings) => {
    setSettings(next);
    saveSettings(next);
    void call.setInput(next);
  };
  const inputs = devices.filter((d) => d.kind === 'audioinput');
  const outputs = devices.filter((d) => d.kind === 'audiooutput');
  const media = [...call.remote.entries()];

  return (
    <div className="voice-call">
      <p className="voice-status" role="status">
        {call.state === 'connected' ? t('voice.connected') : t('voice.connecting')}
      </p>
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
      </div>
      <div className="voice-media">
        {media.map(([mid, m]) =>
          m.kind === 'audio' ? (
            <RemoteAudio key={mid} stream={m.stream} muted={call.selfDeaf} sinkId={settings.outputDeviceId} />
          ) : (
            <RemoteVideo
              key={mid}
              stream={m.stream}
              label={t(m.kind === 'screen' ? 'voice.screenOf' : 'voice.video', {
                name: store.displayName(m.userId, call.guildId),
              })}
            />
          ),
        )}
      </div>
    </div>
  );
}

function RemoteAudio({ stream, muted, sinkId }: { stream: MediaStream; muted: boolean; sinkId: string }) {
  const ref = useRef<HTMLAudioElement>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    element.srcObject = stream;
    void element.play().catch(() => {});
  }, [stream]);
  useEffect(() => {
    const element = ref.current as (HTMLAudioElement & { setSinkId?: (id: string) => Promise<void> }) | null;
    if (element?.setSinkId && sinkId) void element.setSinkId(sinkId).catch(() => {});
  }, [sinkId]);
  return <audio ref={ref} autoPlay muted={muted} className="voice-audio" />;
}

function RemoteVideo({ stream, label }: { stream: MediaStream; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.srcObject = stream;
  }, [stream]);
  return <video ref={ref} autoPlay playsInline muted aria-label={label} className="voice-video" />;
}
