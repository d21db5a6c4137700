import {
  useAudioLevelIndication as audioLevelExtension,
  type PeerConfig,
  type RTCIceServer,
  RTCRtpCodecParameters,
  useSdesMid as sdesMidExtension,
} from 'werift';

/** How the embedded SFU reaches clients: extra announced addresses, a port range and TURN servers. */
export interface SfuNetworkSettings {
  /** Public address(es) announced as extra host candidates (1:1 NAT, cloud VMs); the same ports must be forwarded. */
  announcedAddresses: string[];
  /** UDP port range for media ([min, max]); undefined = ephemeral ports. */
  portRange: [number, number] | undefined;
  /** STUN/TURN servers given to the server's and the clients' ICE agents (coturn: docs/voice.md). */
  iceServers: RTCIceServer[];
  /** Adds loopback host candidates (tests and single-machine development). */
  includeLoopback: boolean;
}

/**
 * Video codecs offered on every video m-line, in this order (docs/voice.md#codecs): VP8 first, so a client that
 * states no preference sends VP8; H.264 constrained baseline 3.1 in non-interleaved mode, which every browser with
 * H.264 decodes. One payload type each and no RTX, so a payload type names one codec on every peer connection.
 */
export const VIDEO_PAYLOAD_TYPES = { VP8: 96, H264: 102 } as const;
const H264_PARAMETERS = 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f';

function videoFeedback() {
  return [
    { type: 'nack' },
    { type: 'nack', parameter: 'pli' },
    { type: 'goog-remb' },
    { type: 'ccm', parameter: 'fir' },
  ];
}

/** Opus (DTX and in-band FEC asked for in fmtp), VP8 and H.264, with NACK/PLI feedback; the audio-level extension. */
export function peerConfig(network: SfuNetworkSettings): Partial<PeerConfig> {
  return {
    codecs: {
      audio: [
        new RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48000,
          channels: 2,
          payloadType: 111,
          parameters: 'minptime=10;useinbandfec=1;usedtx=1',
        }),
      ],
      video: [
        new RTCRtpCodecParameters({
          mimeType: 'video/VP8',
          clockRate: 90000,
          payloadType: VIDEO_PAYLOAD_TYPES.VP8,
          rtcpFeedback: videoFeedback(),
        }),
        new RTCRtpCodecParameters({
          mimeType: 'video/H264',
          clockRate: 90000,
          payloadType: VIDEO_PAYLOAD_TYPES.H264,
          parameters: H264_PARAMETERS,
          rtcpFeedback: videoFeedback(),
        }),
      ],
    },
    headerExtensions: {
      audio: [sdesMidExtension(), audioLevelExtension()],
      video: [sdesMidExtension()],
    },
    iceServers: network.iceServers,
    icePortRange: network.portRange,
    ...(network.includeLoopback ? { iceAdditionalHostAddresses: ['127.0.0.1'] } : {}),
    bundlePolicy: 'max-bundle',
  };
}

/**
 * Adds a copy of every IPv4 host candidate with each announced address (same port and foundation), so a client
 * behind the internet reaches a server behind 1:1 NAT without a TURN server.
 */
export function announceAddresses(sdp: string, addresses: string[]): string {
  if (addresses.length === 0) return sdp;
  const lines = sdp.split('\r\n');
  const out: string[] = [];
  for (const line of lines) {
    out.push(line);
    const match = /^a=candidate:(\S+) (\d) (udp|tcp) (\d+) (\d+\.\d+\.\d+\.\d+) (\d+) typ host(.*)$/i.exec(line);
    if (!match) continue;
    const [, foundation, component, protocol, priority, , port, rest] = match;
    for (const address of addresses)
      out.push(
        `a=candidate:${foundation}x ${component} ${protocol} ${Number(priority) - 1} ${address} ${port} typ host${rest}`,
      );
  }
  return out.join('\r\n');
}

/** RFC 6464 audio level: 0 (loudest) … 127 (silence) dBov; the V bit is ignored. */
export function audioLevel(payload: Buffer): number | undefined {
  const byte = payload[0];
  return byte === undefined ? undefined : byte & 0x7f;
}
