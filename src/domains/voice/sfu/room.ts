import type { RtpPacket } from 'werift';
import { OutgoingRtp } from './fast-forward.ts';
import { type MediaKind, UPSTREAM_KINDS } from './media-kinds.ts';
import type { LayeredPacket, Participant } from './participant.ts';
import { LayerMeter, parseVp8Descriptor } from './temporal-layers.ts';

/** VP8, the codec whose temporal layers are thinned per subscriber (matched without a lower-case copy per packet). */
const VP8 = /^video\/vp8$/i;

/**
 * The member list goes to the room's other members at most this often (docs/voice.md#signalling-protocol-endpoint-of-voice_server_update): each
 * change sent at once cost every join a frame of N ids to each of N members, O(N²) bytes per join wave.
 */
export const PARTICIPANTS_COALESCE_MS = 250;

/** Per-room counters the benchmarks and the status line read. */
export interface RoomStats {
  forwarded: number;
  dropped: number;
}

/**
 * One voice channel's media: who is connected, what each publishes, and the forwarding of every RTP packet from
 * a publisher to each other participant's matching downstream transceiver. The payload is never decoded.
 */
export class Room {
  readonly participants = new Map<string, Participant>();
  /** What each member has published so far; a member who joins later is subscribed to all of it. */
  private readonly published = new Map<string, Set<MediaKind>>();
  /** The weight of each temporal layer of every layered VP8 stream, by `<publisher id>:<kind>`. */
  private readonly layerMeters = new Map<string, LayerMeter>();
  readonly stats: RoomStats = { forwarded: 0, dropped: 0 };
  /** Someone started speaking (the AFK timeout's notion of activity). */
  onActive: ((userId: string) => void) | undefined;
  /** The pending coalesced `participants` broadcast, if one is due. */
  private participantsTimer: NodeJS.Timeout | undefined;

  constructor(
    /** null for a DM or group-DM call (the room is the DM channel). */
    readonly guildId: string | null,
    readonly channelId: string,
    private readonly participantsCoalesceMs = PARTICIPANTS_COALESCE_MS,
  ) {}

  get size(): number {
    return this.participants.size;
  }

  join(participant: Participant): void {
    this.participants.get(participant.userId)?.close();
    this.participants.set(participant.userId, participant);
    participant.onRtp = (kind, packet, mimeType) => this.forward(participant, kind, packet, mimeType);
    participant.onSpeaking = (speaking) => {
      this.broadcast('speaking', { user_id: participant.userId, speaking });
      if (speaking) this.onActive?.(participant.userId);
    };
    participant.onPictureLoss = (publisherId, kind) => this.participants.get(publisherId)?.requestKeyFrame(kind);
    for (const [publisherId, kinds] of this.published)
      if (publisherId !== participant.userId) for (const kind of kinds) participant.subscribe(publisherId, kind);
    // The newcomer hears who is here at once; the others, if any, with the next coalesced list.
    participant.send('participants', { user_ids: [...this.participants.keys()] });
    if (this.participants.size > 1) this.announceParticipants();
    // `speaking` frames are sent on changes: a newcomer hears who is speaking already.
    for (const other of this.participants.values())
      if (other !== participant && other.isSpeaking)
        participant.send('speaking', { user_id: other.userId, speaking: true });
    // A new subscriber can only start decoding video at a key frame: ask every video publisher for one.
    void participant.negotiate().then(() => {
      for (const [publisherId, kinds] of this.published)
        for (const kind of kinds) if (kind !== 'audio') this.participants.get(publisherId)?.requestKeyFrame(kind);
    });
  }

  leave(participant: Participant): void {
    if (this.participants.get(participant.userId) !== participant) return;
    this.participants.delete(participant.userId);
    this.published.delete(participant.userId);
    for (const kind of UPSTREAM_KINDS) this.layerMeters.delete(`${participant.userId}:${kind}`);
    participant.close();
    for (const other of this.participants.values()) other.unsubscribeAll(participant.userId);
    this.announceParticipants();
  }

  /** Sends the member list to everyone once the changes of the next `PARTICIPANTS_COALESCE_MS` are in. */
  private announceParticipants(): void {
    if (this.participantsTimer) return;
    this.participantsTimer = setTimeout(() => {
      this.participantsTimer = undefined;
      if (this.participants.size > 0) this.broadcast('participants', { user_ids: [...this.participants.keys()] });
    }, this.participantsCoalesceMs);
    this.participantsTimer.unref();
  }

  private forward(from: Participant, kind: MediaKind, packet: RtpPacket, mimeType: string | undefined): void {
    let kinds = this.published.get(from.userId);
    if (!kinds?.has(kind)) {
      // First packet of this kind from this member: every other participant gets a downstream m-line for it.
      if (!kinds) {
        kinds = new Set();
        this.published.set(from.userId, kinds);
      }
      kinds.add(kind);
      for (const other of this.participants.values())
        if (other !== from) {
          other.subscribe(from.userId, kind);
          // The key frame that opened the stream was sent before this subscriber could receive it.
          void other.negotiate().then(() => {
            if (kind !== 'audio') from.requestKeyFrame(kind);
          });
        }
    }
    // Server mute and a member without SPEAK stop at the SFU: their audio is forwarded to nobody.
    if (kind === 'audio' && from.flags.silenced) {
      this.stats.dropped++;
      return;
    }
    // Prepared once for every subscriber: the fast path writes each one's header, werift's path takes it serialised.
    const rtp = new OutgoingRtp(packet, kind === 'audio' ? from.audioLevelOf(packet) : undefined);
    const layered = kind !== 'audio' && mimeType && VP8.test(mimeType) ? this.layered(from, kind, packet) : undefined;
    for (const other of this.participants.values()) {
      if (other === from || (kind === 'audio' && other.flags.deafened)) continue;
      const outcome = other.forward(from.userId, kind, mimeType, rtp, layered);
      if (outcome === 'sent') this.stats.forwarded++;
      // A subscriber whose browser cannot decode the publisher's codec does not get that stream.
      else if (outcome === 'unsupported') this.stats.dropped++;
    }
  }

  /** A VP8 packet with a temporal layer index: weighed into its stream's meter (docs/voice.md#layer-selection). */
  private layered(from: Participant, kind: MediaKind, packet: RtpPacket): LayeredPacket | undefined {
    const descriptor = parseVp8Descriptor(packet.payload);
    if (descriptor?.temporalId === undefined) return undefined;
    const key = `${from.userId}:${kind}`;
    let meter = this.layerMeters.get(key);
    if (!meter) {
      meter = new LayerMeter();
      this.layerMeters.set(key, meter);
    }
    meter.add(descriptor.temporalId, packet.payload.length, performance.now());
    return { descriptor, meter };
  }

  broadcast(op: string, d: unknown): void {
    // Serialised once: each join sends the whole member list to every member, so per member it cost a stringify
    // of N ids, N times per join (3.7 % of the server's CPU in a 100-listener join wave).
    const frame = Buffer.from(JSON.stringify({ op, d }));
    for (const participant of this.participants.values()) participant.sendSerialized(frame);
  }
}

export { UPSTREAM_KINDS };
