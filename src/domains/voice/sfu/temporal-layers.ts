/**
 * VP8 temporal layers (docs/voice.md#layer-selection): what the SFU reads from a VP8 payload descriptor
 * (RFC 7741 §4.2), how much each layer of a publisher's stream weighs, and the per-subscriber filter that drops the
 * frames of the layers a subscriber's bandwidth cannot take while keeping its sequence numbers and picture IDs
 * gapless. Pure functions and state; no werift import.
 */

export interface Vp8Descriptor {
  /** S bit with partition index 0: the first packet of a frame. */
  frameStart: boolean;
  /** Temporal layer (TID), when the publisher sends temporal layers. */
  temporalId: number | undefined;
  /** Y bit: this frame depends only on layer 0, so a subscriber can start receiving its layer here. */
  layerSync: boolean;
  /** Where the picture ID sits in the payload, and its width (7 or 15 bits). */
  pictureId: { offset: number; bits: 7 | 15 } | undefined;
  /** Payload header P bit clear on the frame's first packet: a key frame. */
  keyFrame: boolean;
}

export function parseVp8Descriptor(payload: Buffer): Vp8Descriptor | undefined {
  if (payload.length < 1) return undefined;
  const first = payload[0] ?? 0;
  const extended = (first & 0x80) !== 0;
  const frameStart = (first & 0x10) !== 0 && (first & 0x07) === 0;
  let offset = 1;
  let temporalId: number | undefined;
  let layerSync = false;
  let pictureId: Vp8Descriptor['pictureId'];
  if (extended) {
    const flags = payload[offset++];
    if (flags === undefined) return undefined;
    if (flags & 0x80) {
      const byte = payload[offset];
      if (byte === undefined) return undefined;
      const bits = byte & 0x80 ? 15 : 7;
      pictureId = { offset, bits };
      offset += bits === 15 ? 2 : 1;
    }
    if (flags & 0x40) offset++; // TL0PICIDX
    if (flags & 0x30) {
      const byte = payload[offset++];
      if (byte === undefined) return undefined;
      if (flags & 0x20) {
        temporalId = byte >> 6;
        layerSync = (byte & 0x20) !== 0;
      }
    }
  }
  const header = payload[offset];
  const keyFrame = frameStart && header !== undefined && (header & 0x01) === 0;
  return { frameStart, temporalId, layerSync, pictureId, keyFrame };
}

const WINDOW_MS = 1000;

/**
 * Bits per second of each temporal layer of one publisher's stream, over the last window of about a second. The
 * window is closed by the first packet after a second has passed, so it is divided by its real length: on a busy
 * event loop packets are read late and in bursts, and a window that lasted 1.4 s must not weigh 1.4 times more.
 */
export class LayerMeter {
  private bytes = [0, 0, 0, 0];
  private previous = [0, 0, 0, 0];
  private previousMs = WINDOW_MS;
  private windowStart = 0;

  add(temporalId: number, size: number, now: number): void {
    this.roll(now);
    this.bytes[temporalId & 3] = (this.bytes[temporalId & 3] ?? 0) + size;
  }

  /** The highest layer whose stream, with every layer below it, fits in `bitsPerSecond` (0 at least). */
  highestWithin(bitsPerSecond: number, now: number): number {
    this.roll(now);
    let total = 0;
    let highest = 0;
    for (let layer = 0; layer < 4; layer++) {
      total += ((this.previous[layer] ?? 0) * 8 * 1000) / this.previousMs;
      if (layer === 0 || total <= bitsPerSecond) highest = layer;
      else break;
    }
    return highest;
  }

  private roll(now: number): void {
    if (now - this.windowStart < WINDOW_MS) return;
    // A window with nothing in it (a pause) leaves the last measured weights in place.
    if (this.bytes.some((b) => b > 0)) {
      this.previous = this.bytes;
      this.previousMs = now - this.windowStart;
    }
    this.bytes = [0, 0, 0, 0];
    this.windowStart = now;
  }
}

/**
 * One subscriber's view of one layered stream: whole frames above `maxLayer` are dropped; going down happens at
 * the next frame, going up only at a key frame or a layer-sync frame (which depends on layer 0 alone). The frames
 * and packets dropped so far are subtracted from picture IDs and sequence numbers, so the subscriber sees a
 * gapless stream and asks for no retransmission of what it was never meant to get.
 */
export class LayerFilter {
  private forwarding = Number.POSITIVE_INFINITY;
  private currentTimestamp: number | undefined;
  private currentDropped = false;
  private droppedPackets = 0;
  private droppedFrames = 0;

  /** The layer now forwarded at most (Infinity before any limit). */
  get layer(): number {
    return this.forwarding;
  }

  /**
   * Whether to forward this packet; when forwarded, `payload` and the returned sequence number are rewritten for
   * the frames dropped so far (the payload is a copy the caller owns).
   */
  admit(
    descriptor: Vp8Descriptor,
    timestamp: number,
    sequenceNumber: number,
    payload: Buffer,
    maxLayer: number,
  ): number | undefined {
    const layer = descriptor.temporalId;
    if (layer === undefined) return (sequenceNumber - this.droppedPackets) & 0xffff;
    if (timestamp !== this.currentTimestamp) {
      this.currentTimestamp = timestamp;
      if (maxLayer < this.forwarding) this.forwarding = maxLayer;
      else if (maxLayer > this.forwarding) {
        if (descriptor.keyFrame) this.forwarding = maxLayer;
        // A layer-sync frame of layer L depends on layer 0 alone: layer L can start here, not the ones above it.
        else if (descriptor.layerSync && layer > this.forwarding && layer <= maxLayer) this.forwarding = layer;
      }
      this.currentDropped = layer > this.forwarding;
      if (this.currentDropped) this.droppedFrames++;
    }
    if (this.currentDropped) {
      this.droppedPackets++;
      return undefined;
    }
    if (descriptor.pictureId && this.droppedFrames > 0) {
      const { offset, bits } = descriptor.pictureId;
      if (bits === 7) {
        const value = ((payload[offset] ?? 0) & 0x7f) - this.droppedFrames;
        payload[offset] = value & 0x7f;
      } else {
        const value = (((payload[offset] ?? 0) & 0x7f) << 8) | (payload[offset + 1] ?? 0);
        const next = (value - this.droppedFrames) & 0x7fff;
        payload[offset] = 0x80 | (next >> 8);
        payload[offset + 1] = next & 0xff;
      }
    }
    return (sequenceNumber - this.droppedPackets) & 0xffff;
  }
}
