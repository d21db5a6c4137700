/**
 * What a client publishes, one upstream transceiver each, in this order (mids 0, 1, 2). Kept apart from
 * `participant.ts` so the room and the signalling server load without werift, which is imported at the first
 * participant (docs/performance.md#start-up).
 */
export const UPSTREAM_KINDS = ['audio', 'camera', 'screen'] as const;
export type MediaKind = (typeof UPSTREAM_KINDS)[number];
