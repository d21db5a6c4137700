import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import type { Clock } from '../../../platform/clock.ts';
import { digest } from '../../../platform/crypto/tokens.ts';
import type { Logger } from '../../../platform/log.ts';
import type { EventBus } from '../../../platform/state/event-bus.ts';
import type { StoredVoiceState, VoiceStateStore } from '../../../platform/state/voice-states.ts';
import { DISPATCH_TOPIC } from '../../events/dispatch.ts';
import { HANDSHAKE_HOLD_LIMIT_MS, HANDSHAKE_LIMIT, HandshakeGate } from './handshake-gate.ts';
import type { SfuNetworkSettings } from './media-config.ts';
import type { ForwardingFlags, MediaFailure, Participant } from './participant.ts';
import { Room } from './room.ts';

/** The path of the media endpoint announced in VOICE_SERVER_UPDATE. */
export const VOICE_PATH = '/voice';

/** Signalling closes (Discord's voice gateway numbers where one exists). */
export const VOICE_CLOSE = {
  NOT_AUTHENTICATED: { code: 4003, reason: 'Not authenticated' },
  AUTHENTICATION_FAILED: { code: 4004, reason: 'Authentication failed' },
  DECODE_ERROR: { code: 4002, reason: 'Failed to decode payload' },
  DISCONNECTED: { code: 4014, reason: 'Disconnected' },
  SESSION_REPLACED: { code: 4006, reason: 'Session no longer valid' },
  /** The room was moved to another voice node (docs/voice.md#failover); the member has a token for it. */
  ROOM_MOVED: { code: 4006, reason: 'Room moved to another voice node' },
  /** The member's media never connected (docs/voice.md#join-admission); their voice state was cleared. */
  MEDIA_FAILED: { code: 4014, reason: 'Media connection failed' },
} as const;

const IDENTIFY_TIMEOUT_MS = 10_000;
/** Speech is reported as activity at most this often per member (one shared-store write). */
const ACTIVITY_REPORT_MS = 15_000;
const MAX_FRAME_BYTES = 64 * 1024;

export interface SignallingDeps {
  store: VoiceStateStore;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  network: SfuNetworkSettings;
  /** A member spoke (throttled per member): activity for the AFK timeout. */
  onActive?: (guildId: string, userId: string) => void;
  /** Refuses an upgrade from a banned address (the same check as the Gateway's); true = admitted. */
  admit?: (request: IncomingMessage) => Promise<boolean>;
  /**
   * A member's media never connected (DTLS refused, connection failed, or not connected in time) and they were
   * removed from the room: their voice state for this room and session is to go, as at a leave.
   */
  onMediaFailed?: (member: MediaFailedMember) => void;
  /** How long after the first offer a member's media must be connected (default MEDIA_CONNECT_LIMIT_MS). */
  mediaConnectLimitMs?: number;
  /** How often at most a room's member list goes to its members (default PARTICIPANTS_COALESCE_MS). */
  participantsCoalesceMs?: number;
}

/** Whose media failed, and where (`guildId` null: a DM or group-DM call). */
export interface MediaFailedMember {
  guildId: string | null;
  channelId: string;
  userId: string;
  sessionId: string;
  reason: MediaFailure;
}

export function forwardingFlags(state: Pick<StoredVoiceState, 'mute' | 'suppress' | 'deaf'>): ForwardingFlags {
  return { silenced: state.mute || state.suppress, deafened: state.deaf };
}

/**
 * The embedded SFU's signalling WebSocket at `/voice`. A client opens it with the token of its
 * VOICE_SERVER_UPDATE (`{op:"identify", d:{token}}`); the server then offers, the client answers
 * (`{op:"answer", d:{sdp}}`) and may trickle candidates (`{op:"candidate", d:{candidate, sdpMid}}`). Voice-state
 * changes (server mute, deafen, move, disconnect) arrive on the event bus and apply to forwarding at once.
 */
export class VoiceSignallingServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  private readonly rooms = new Map<string, Room>();
  /** `room key:user` → when speech was last reported; pruned when it grows past the live participants. */
  private readonly reported = new Map<string, number>();
  private readonly unsubscribe: () => void;
  /** One per process: new peer connections negotiate a few at a time (docs/voice.md#join-admission). */
  private readonly handshakes = new HandshakeGate(HANDSHAKE_LIMIT, HANDSHAKE_HOLD_LIMIT_MS);

  constructor(private readonly deps: SignallingDeps) {
    this.unsubscribe = deps.bus.subscribe(DISPATCH_TOPIC, (dispatch) => {
      if (dispatch.event === 'VOICE_STATE_UPDATE') this.onVoiceState(dispatch.payload);
    });
  }

  /**
   * Listens for `/voice` upgrades. `alone`: no other upgrade listener (a voice-only process), so any other path
   * is answered 404 here rather than left hanging.
   */
  attach(server: Server, options: { alone?: boolean } = {}): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = new URL(request.url ?? '/', 'http://voice.invalid').pathname;
      if (path !== VOICE_PATH && path !== `${VOICE_PATH}/`) {
        if (options.alone && socket.writable)
          socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      socket.on('error', () => {});
      const admitted = this.deps.admit ? this.deps.admit(request) : Promise.resolve(true);
      admitted
        .catch(() => false)
        .then((ok) => {
          if (!ok) {
            if (socket.writable) socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
            return;
          }
          this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws));
        });
    });
  }

  stats(): {
    rooms: number;
    participants: number;
    forwarded: number;
    dropped: number;
    /** `refused`: handshakes aborted since start, the client's signature or Finished missing or wrong. */
    handshakes: { inProgress: number; queued: number; refused: number };
    /** Members by peer-connection state (`new`, `connecting`, `connected`, `failed` …): why a step of the bench broke. */
    connections: Record<string, number>;
  } {
    let participants = 0;
    let forwarded = 0;
    let dropped = 0;
    const connections: Record<string, number> = {};
    for (const room of this.rooms.values()) {
      participants += room.size;
      forwarded += room.stats.forwarded;
      dropped += room.stats.dropped;
      for (const participant of room.participants.values()) {
        const state = participant.pc.connectionState;
        connections[state] = (connections[state] ?? 0) + 1;
      }
    }
    return {
      rooms: this.rooms.size,
      participants,
      forwarded,
      dropped,
      handshakes: {
        inProgress: this.handshakes.inProgress,
        queued: this.handshakes.queued,
        refused: this.handshakes.refused,
      },
      connections,
    };
  }

  /** The rooms with someone connected, by room key (`<guild id>:<channel id>`, `call:<channel id>`). */
  roomKeys(): string[] {
    return [...this.rooms.keys()];
  }

  /**
   * The room now lives on another node (this one was taken for dead and came back): its members here are
   * closed (`closed {reason: "moved"}`, 4006), so nobody stays in a half of a split room.
   */
  evict(key: string): number {
    const room = this.rooms.get(key);
    if (!room) return 0;
    const members = [...room.participants.values()];
    for (const participant of members) {
      participant.send('closed', { reason: 'moved' });
      this.leave(room, participant);
      participant.closeSocket(VOICE_CLOSE.ROOM_MOVED);
    }
    return members.length;
  }

  async close(): Promise<void> {
    this.unsubscribe();
    for (const room of this.rooms.values())
      for (const participant of [...room.participants.values()]) room.leave(participant);
    this.rooms.clear();
    this.wss.close();
  }

  private accept(ws: WebSocket): void {
    let participant: Participant | undefined;
    let room: Room | undefined;
    let identifying = false;
    const timer = setTimeout(() => {
      if (!participant) closeWith(ws, VOICE_CLOSE.NOT_AUTHENTICATED);
    }, IDENTIFY_TIMEOUT_MS);
    ws.on('error', () => {});
    ws.on('close', () => {
      clearTimeout(timer);
      if (participant && room) this.leave(room, participant);
    });
    ws.on('message', (data, isBinary) => {
      const message = isBinary ? undefined : parse(data.toString());
      if (!message) return closeWith(ws, VOICE_CLOSE.DECODE_ERROR);
      if (!participant) {
        if (message.op !== 'identify' || identifying) return closeWith(ws, VOICE_CLOSE.NOT_AUTHENTICATED);
        identifying = true;
        const token = (message.d as { token?: unknown } | undefined)?.token;
        this.identify(ws, typeof token === 'string' ? token : '')
          .then((joined) => {
            if (!joined) return closeWith(ws, VOICE_CLOSE.AUTHENTICATION_FAILED);
            clearTimeout(timer);
            ({ participant, room } = joined);
            if (ws.readyState !== WebSocket.OPEN) this.leave(room, participant);
          })
          .catch((error) => {
            this.deps.log.error('voice identify failed', { error: (error as Error).message });
            closeWith(ws, VOICE_CLOSE.AUTHENTICATION_FAILED);
          });
        return;
      }
      const d = (message.d ?? {}) as Record<string, unknown>;
      if (message.op === 'answer' && typeof d.sdp === 'string') participant.answer(d.sdp);
      else if (message.op === 'candidate' && typeof d.candidate === 'string')
        participant
          .candidate({
            candidate: d.candidate,
            ...(typeof d.sdpMid === 'string' ? { sdpMid: d.sdpMid } : {}),
            ...(typeof d.sdpMLineIndex === 'number' ? { sdpMLineIndex: d.sdpMLineIndex } : {}),
          })
          .catch(() => {});
      else if (message.op !== 'heartbeat') closeWith(ws, VOICE_CLOSE.DECODE_ERROR);
    });
  }

  /** The token must name a live grant and the member must still be in that room with that session. */
  private async identify(ws: WebSocket, token: string): Promise<{ participant: Participant; room: Room } | undefined> {
    if (token.length === 0 || token.length > 128) return undefined;
    // werift (WebRTC) is loaded at the first participant, not at start (docs/performance.md#start-up); loaded
    // before the checks, so nothing is awaited between the voice state read and the join.
    const { Participant } = await import('./participant.ts');
    const grant = await this.deps.store.grant(digest(token), this.deps.clock.now());
    if (!grant) return undefined;
    const state = await this.deps.store.get(grant.guildId ?? grant.channelId, grant.userId);
    if (!state || state.channel_id !== grant.channelId || state.session_id !== grant.sessionId) return undefined;
    const key = roomKey(grant.guildId, grant.channelId);
    let room = this.rooms.get(key);
    if (!room) {
      room = new Room(grant.guildId, grant.channelId, this.deps.participantsCoalesceMs);
      const created = room;
      created.onActive = (userId) => this.reportActive(created, userId);
      this.rooms.set(key, room);
    }
    const previous = room.participants.get(grant.userId);
    if (previous) {
      previous.send('closed', { reason: 'replaced' });
      previous.close();
    }
    const participant = new Participant(
      grant.userId,
      grant.sessionId,
      ws,
      this.deps.network,
      this.handshakes,
      this.deps.mediaConnectLimitMs,
    );
    participant.flags = forwardingFlags(state);
    const joined = room;
    participant.onMediaFailed = (reason) => this.mediaFailed(joined, participant, reason);
    participant.send('ready', {
      user_id: grant.userId,
      guild_id: grant.guildId,
      channel_id: grant.channelId,
      ice_servers: this.deps.network.iceServers,
    });
    room.join(participant);
    return { participant, room };
  }

  private reportActive(room: Room, userId: string): void {
    // DM calls have no AFK timeout.
    if (!this.deps.onActive || room.guildId === null) return;
    const key = `${roomKey(room.guildId, room.channelId)}:${userId}`;
    const now = Date.now();
    if (now - (this.reported.get(key) ?? 0) < ACTIVITY_REPORT_MS) return;
    this.reported.set(key, now);
    if (this.reported.size > 2 * this.stats().participants + 100)
      for (const [k, at] of this.reported) if (now - at >= ACTIVITY_REPORT_MS) this.reported.delete(k);
    this.deps.onActive(room.guildId, userId);
  }

  /**
   * A member whose media never connected leaves the room and the voice channel (docs/voice.md#join-admission):
   * otherwise their voice state stayed and everyone saw them in the channel, with no media, for good.
   */
  private mediaFailed(room: Room, participant: Participant, reason: MediaFailure): void {
    if (room.participants.get(participant.userId) !== participant) return;
    this.deps.log.info('voice member removed: media never connected', {
      room: roomKey(room.guildId, room.channelId),
      user: participant.userId,
      reason,
    });
    participant.send('closed', { reason: 'failed' });
    this.leave(room, participant);
    participant.closeSocket(VOICE_CLOSE.MEDIA_FAILED);
    this.deps.onMediaFailed?.({
      guildId: room.guildId,
      channelId: room.channelId,
      userId: participant.userId,
      sessionId: participant.sessionId,
      reason,
    });
  }

  private leave(room: Room, participant: Participant): void {
    room.leave(participant);
    if (room.size === 0 && this.rooms.get(roomKey(room.guildId, room.channelId)) === room)
      this.rooms.delete(roomKey(room.guildId, room.channelId));
  }

  /** Server mute/deafen applies to forwarding at once; a move, a disconnect or another session ends the media. */
  private onVoiceState(payload: Record<string, unknown>): void {
    const guildId = payload.guild_id;
    const userId = payload.user_id;
    if ((typeof guildId !== 'string' && guildId !== null) || typeof userId !== 'string') return;
    for (const room of this.rooms.values()) {
      if (room.guildId !== guildId) continue;
      const participant = room.participants.get(userId);
      if (!participant) continue;
      // A user's DM-call states are one per call: a state for another call concerns this room only when it is
      // this session's (the session left for another call or hung up; the leave names no channel).
      if (guildId === null && payload.channel_id !== room.channelId && payload.session_id !== participant.sessionId)
        continue;
      if (payload.channel_id !== room.channelId || payload.session_id !== participant.sessionId) {
        participant.send('closed', { reason: 'disconnected' });
        this.leave(room, participant);
        participant.closeSocket(VOICE_CLOSE.DISCONNECTED);
        continue;
      }
      participant.flags = forwardingFlags(payload as unknown as StoredVoiceState);
    }
  }
}

function roomKey(guildId: string | null, channelId: string): string {
  return `${guildId ?? 'call'}:${channelId}`;
}

function parse(text: string): { op: string; d: unknown } | undefined {
  try {
    const value = JSON.parse(text) as { op?: unknown; d?: unknown };
    if (typeof value !== 'object' || value === null || typeof value.op !== 'string') return undefined;
    return { op: value.op, d: value.d };
  } catch {
    return undefined;
  }
}

function closeWith(ws: WebSocket, close: { code: number; reason: string }): void {
  if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(close.code, close.reason);
}
