import type { RTCDtlsTransport } from 'werift';
import { type PeerSignatureError, verifyPeerSignatures } from './dtls-peer-signature.ts';

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
export function keepEarlyDtls(
  transport: RTCDtlsTransport,
  /** A handshake refused because the peer's signature did not verify (docs/voice.md#join-admission). */
  onRefused?: (error: PeerSignatureError) => void,
): void {
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
      ignoreAnsweredClientHellos(transport.dtls);
      try {
        verifyPeerSignatures(transport.dtls, onRefused);
      } catch {
        // Not a werift socket with the parts checked at load (checkPeerSignatureHooks): no media without the check.
        transport.stop().catch(() => {});
      }
      for (const record of early.splice(0)) connection.onData.execute(record);
    });
  });
}

/** ClientHello body: version (2), random (32), session id (1 + n), cookie (1 + n) (RFC 6347 §4.2.1). */
const CLIENT_HELLO_RANDOM = 2;
const RANDOM_LENGTH = 32;
const HANDSHAKE_CLIENT_HELLO = 1;

interface AssembledHandshake {
  msg_type: number;
  fragment: Buffer;
}

/** The parts of werift's DTLS server this guard reads; anything else (a client, a newer werift) is left alone. */
interface DtlsServerParts {
  onHandleHandshakes: (assembled: AssembledHandshake[]) => Promise<void>;
  dtls: { flight: number };
  cipher: { remoteRandom?: { serialize(): Buffer } };
}

function isDtlsServer(dtls: unknown): dtls is DtlsServerParts {
  const d = dtls as Partial<DtlsServerParts> | undefined;
  return typeof d?.onHandleHandshakes === 'function' && typeof d.dtls?.flight === 'number' && d.cipher !== undefined;
}

/** A ClientHello without a cookie: the client's first, or a retransmission of it. */
export function isFirstClientHello(fragment: Buffer): boolean {
  const sessionIdAt = CLIENT_HELLO_RANDOM + RANDOM_LENGTH;
  const sessionIdLength = fragment[sessionIdAt];
  if (sessionIdLength === undefined) return false;
  const cookieLength = fragment[sessionIdAt + 1 + sessionIdLength];
  return cookieLength === 0;
}

/**
 * Drops a late copy of a ClientHello the server has already answered (docs/voice.md#join-admission). werift's DTLS
 * server answers every ClientHello without a cookie by making a new key pair and random, even when it has sent its
 * ServerHello already: a retransmission that crossed the server's answer (a busy server answers after the client's
 * first retransmission timer, 500 ms in werift, 1 s in browsers) made the server derive keys from a key pair the
 * client never saw, and the member heard nothing, with both sides "connected". The copy is recognised by its
 * client random (the same ClientHello) once the handshake is past the cookie exchange; a new handshake (a new
 * random) still goes through.
 */
export function ignoreAnsweredClientHellos(dtls: unknown): void {
  if (!isDtlsServer(dtls)) return;
  const handle = dtls.onHandleHandshakes;
  dtls.onHandleHandshakes = (assembled) => {
    const answered = dtls.dtls.flight >= 4 ? dtls.cipher.remoteRandom?.serialize() : undefined;
    if (!answered) return handle(assembled);
    const kept = assembled.filter(
      (h) =>
        h.msg_type !== HANDSHAKE_CLIENT_HELLO ||
        !isFirstClientHello(h.fragment) ||
        !h.fragment.subarray(CLIENT_HELLO_RANDOM, CLIENT_HELLO_RANDOM + RANDOM_LENGTH).equals(answered),
    );
    return handle(kept);
  };
}
