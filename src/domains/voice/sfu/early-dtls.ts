import type { RTCDtlsTransport } from 'werift';

/** DTLS records kept per connection before its DTLS server starts: a ClientHello and its retransmissions. */
const EARLY_RECORDS_KEPT = 4;

/** A DTLS record by its first byte (RFC 7983: 20–63), as opposed to STUN or RTP on the same port. */
function isDtlsRecord(data: Buffer): boolean {
  const first = data[0];
  return first !== undefined && first >= 20 && first <= 63;
}

/**
 * Keeps the DTLS records a client sends before this side's DTLS server has started, and hands them to it once it
 * has (docs/voice.md#join-admission). The client (a browser answers `a=setup:active`) sends its ClientHello as soon
 * as *its* ICE check succeeds, which is often before the server, the controlling side, has seen the response to its
 * nominating check and started DTLS; werift drops such a record, and the join then waits for the client's first
 * retransmission (werift's first comes after 500 ms). Only a few records are kept, and only until DTLS starts.
 */
export function keepEarlyDtls(transport: RTCDtlsTransport): void {
  const connection = transport.iceTransport.connection;
  const early: Buffer[] = [];
  const { unSubscribe } = connection.onData.subscribe((data) => {
    if (transport.state === 'new' && early.length < EARLY_RECORDS_KEPT && isDtlsRecord(data)) early.push(data);
  });
  const { unSubscribe: stopWatching } = transport.onStateChange.subscribe((state) => {
    if (state === 'new') return;
    unSubscribe();
    stopWatching();
    if (state !== 'connecting') return;
    // werift creates the DTLS server right after announcing `connecting`, in the same synchronous step; it listens
    // to the same ICE data events, so the kept records reach it as if they had just arrived.
    queueMicrotask(() => {
      for (const record of early.splice(0)) connection.onData.execute(record);
    });
  });
}
