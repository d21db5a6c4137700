import type { RTCIceServer, RTCPeerConnection } from 'werift';

/** Whether any of the configured ICE servers is a STUN server (`stun:` or `stuns:`). */
export function hasStunServer(iceServers: readonly RTCIceServer[]): boolean {
  return iceServers.some((server) =>
    (Array.isArray(server.urls) ? server.urls : [server.urls]).some((url) => /^stuns?:/i.test(url)),
  );
}

/**
 * Keeps werift from asking a STUN server nobody configured. When its settings name none, werift's ICE asks
 * `stun.l.google.com` for a server-reflexive candidate on every connection: a self-hosted server would tell a third
 * party about every join, and where outbound UDP is dropped each offer would wait for that query to time out.
 * The SFU's public address comes from the announced addresses instead (docs/voice.md, "Network settings"). Called
 * once its ICE transports exist, before they gather.
 */
export function forgoUnconfiguredStun(pc: RTCPeerConnection, iceServers: readonly RTCIceServer[]): void {
  if (hasStunServer(iceServers)) return;
  for (const transport of pc.iceTransports) transport.connection.stunServer = undefined;
}
