import { DtlsClient, type RTCDtlsTransport, type RTCPeerConnection } from 'werift';

/**
 * Makes a werift client start its DTLS handshake as soon as its ICE is connected, as a browser does. werift's DTLS
 * client otherwise waits a fixed 100 ms before its first ClientHello, which the voice bench measured as join time
 * (docs/performance.md#voice). Its `connect` is started at once and made idempotent, so werift's own call after the
 * sleep joins the same handshake instead of starting another.
 */
export function startDtlsAtOnce(pc: RTCPeerConnection): void {
  const hooked = new WeakSet<RTCDtlsTransport>();
  pc.iceConnectionStateChange.subscribe(() => {
    for (const transport of pc.dtlsTransports) {
      if (hooked.has(transport)) continue;
      hooked.add(transport);
      transport.onStateChange.subscribe((state) => {
        if (state !== 'connecting') return;
        // werift creates the DTLS socket right after announcing `connecting`, in the same synchronous step.
        queueMicrotask(() => {
          const dtls = transport.dtls;
          if (!(dtls instanceof DtlsClient)) return;
          const connect = dtls.connect.bind(dtls);
          let started: Promise<void> | undefined;
          dtls.connect = () => {
            started ??= connect();
            return started;
          };
          dtls.connect().catch(() => {});
        });
      });
    }
  });
}
