import { useSyncExternalStore } from 'react';
import type { GatewayHub } from '../../gateway/hub.ts';
import { VoiceConnection, type VoiceSettings } from './voice-connection.ts';
import { VoiceStates } from './voice-states.ts';

const SETTINGS_KEY = 'hearth.voice';

/** The tab's one voice call, kept while the person browses other channels. */
let current: VoiceConnection | null = null;
/** The channel of the last call the SFU ended because its media never connected, until the next join. */
let failedIn: { guildId: string | null; channelId: string } | null = null;
let version = 0;
const listeners = new Set<() => void>();
const states = new WeakMap<GatewayHub, VoiceStates>();

function changed(): void {
  version++;
  for (const listener of listeners) listener();
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

export function useCall(): VoiceConnection | null {
  useSyncExternalStore(subscribe, () => version);
  return current;
}

/** Whether the last call in this channel ended because its media never connected (shown until the next join). */
export function useMediaFailedIn(guildId: string | null, channelId: string): boolean {
  useSyncExternalStore(subscribe, () => version);
  return failedIn?.guildId === guildId && failedIn.channelId === channelId;
}

export function useVoiceStates(hub: GatewayHub): VoiceStates {
  let store = states.get(hub);
  if (!store) {
    store = new VoiceStates(hub);
    states.set(hub, store);
  }
  useSyncExternalStore(store.subscribe, store.getVersion);
  return store;
}

export function loadSettings(): VoiceSettings {
  const fallback: VoiceSettings = {
    inputDeviceId: '',
    outputDeviceId: '',
    echoCancellation: true,
    noiseSuppression: true,
    inputMode: 'voiceActivity',
    pushToTalkKey: 'Backquote',
    sensitivityAuto: true,
    sensitivityDb: -50,
    videoCodec: 'VP8',
  };
  try {
    return { ...fallback, ...(JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}') as Partial<VoiceSettings>) };
  } catch {
    return fallback;
  }
}

export function saveSettings(settings: VoiceSettings): void {
  localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
}

const VOLUMES_KEY = 'hearth.voice.volumes';

/** Per-participant playback volumes in percent (0–200, default 100), by user id. */
export function loadVolumes(): Record<string, number> {
  try {
    const stored = JSON.parse(localStorage.getItem(VOLUMES_KEY) ?? '{}') as Record<string, unknown>;
    return Object.fromEntries(Object.entries(stored).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    return {};
  }
}

/** Remembers a participant's volume and re-renders the call's views (the slider and their audio's gain). */
export function saveVolume(userId: string, percent: number): void {
  const volumes = loadVolumes();
  if (percent === 100) delete volumes[userId];
  else volumes[userId] = percent;
  localStorage.setItem(VOLUMES_KEY, JSON.stringify(volumes));
  changed();
}

/**
 * Joins a guild voice channel, or with `guildId` null a DM or group-DM call. `vadAllowed` false (no USE_VAD in
 * the channel) forces push-to-talk.
 */
export async function startCall(
  hub: GatewayHub,
  guildId: string | null,
  channelId: string,
  vadAllowed = true,
): Promise<void> {
  current?.leave();
  const call = new VoiceConnection(hub, guildId, channelId, loadSettings(), vadAllowed);
  call.onChange = () => {
    if (call.state === 'closed' && current === call) {
      current = null;
      if (call.endReason === 'media-failed') failedIn = { guildId, channelId };
    }
    changed();
  };
  failedIn = null;
  current = call;
  changed();
  try {
    await call.join();
  } catch (error) {
    if (current === call) current = null;
    changed();
    throw error;
  }
}

/** The key held to talk in this tab's call, when it is in push-to-talk mode (the composer leaves it alone). */
export function pushToTalkKeyInUse(): string | null {
  return current?.pushToTalk ? current.pushToTalkKey : null;
}

export function leaveCall(): void {
  current?.leave();
  current = null;
  changed();
}

/** The call's WebRTC statistics, for the browser tests and for diagnosing a call from the devtools console. */
declare global {
  interface Window {
    hearthVoiceStats?: () => Promise<RTCStatsReport> | undefined;
  }
}
if (typeof window !== 'undefined') window.hearthVoiceStats = () => current?.stats();

// A closed tab leaves at once rather than after the gateway's resume window.
if (typeof window !== 'undefined') window.addEventListener('pagehide', () => current?.leave());
