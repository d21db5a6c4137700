import { createHash, createHmac, type KeyObject, timingSafeEqual, verify, X509Certificate } from 'node:crypto';
import { DtlsClient, DtlsServer } from 'werift';

/**
 * Checks the signature by which the DTLS peer proves it holds its certificate's private key (docs/voice.md#join-admission).
 * werift verifies none: as server it reads the client's CertificateVerify and ignores it, as client it ignores the
 * signature of the ServerKeyExchange; it only compares the certificate's fingerprint with the SDP's, which anyone
 * who saw the SDP can present. A handshake whose signature is missing or wrong is aborted before this side's
 * Finished: a fatal alert goes to the peer, the DTLS transport fails, no SRTP keys are made.
 *
 * werift does not check the peer's Finished either (as server it logs it, as client it calls itself connected on
 * it): its verify_data, the PRF over the handshake transcript (RFC 5246 §7.4.9), is checked here too.
 *
 * Where: werift's handshake code is bundle-local; what is reachable is the socket's own `onHandleHandshakes` and
 * `cipher` (instance properties). Each side calls `cipher.verifyData` exactly once per handshake, to make its
 * Finished, once every message of the peer's flight is there (werift waits for them) — the check runs first.
 */

/** Handshake message types (RFC 5246 §7.4). */
const SERVER_KEY_EXCHANGE = 12;
const CERTIFICATE_VERIFY = 15;
const FINISHED = 20;
/** verify_data_length of every TLS 1.2 suite werift has (RFC 5246 §7.4.9). */
const VERIFY_DATA_LENGTH = 12;
/** Alert (RFC 5246 §7.2): content type, level fatal, descriptions. */
const ALERT = 21;
const FATAL = 2;
const HANDSHAKE_FAILURE = 40;
const DECRYPT_ERROR = 51;
/** TLS 1.2 SignatureAndHashAlgorithm bytes (RFC 5246 §7.4.1.4.1) → node's names. */
const HASHES: Record<number, string> = { 2: 'sha1', 4: 'sha256', 5: 'sha384', 6: 'sha512' };
const KEY_TYPES: Record<number, string> = { 1: 'rsa', 3: 'ec' };

/** A handshake message as werift caches it; `serialize()` includes the 12-byte DTLS handshake header. */
interface CachedHandshake {
  msg_type: number;
  fragment: Buffer;
  serialize(): Buffer;
}

interface CipherParts {
  verifyData(buf: Buffer): Buffer;
  /** Set once the peer's key exchange is in (werift's own field). */
  masterSecret?: Buffer;
  remoteCertificate?: Buffer;
  localRandom?: { serialize(): Buffer };
  remoteRandom?: { serialize(): Buffer };
}

interface SocketParts {
  onHandleHandshakes: (assembled: { msg_type: number; fragment: Buffer }[]) => Promise<void>;
  /** werift's own flag: the handshake is done. */
  connected?: boolean;
  cipher: CipherParts;
  dtls: { sortedHandshakeCache: CachedHandshake[]; epoch: number; recordSequenceNumber: number };
  transport: { send(buf: Buffer): Promise<unknown> };
}

/** Why the peer's handshake signature, or the client's Finished, does not verify. */
export class PeerSignatureError extends Error {
  constructor(
    message: string,
    /** The alert description sent to the peer. */
    readonly alert: number,
  ) {
    super(message);
    this.name = 'PeerSignatureError';
  }
}

/** Whether `signature`, with TLS 1.2's hash and signature bytes, is the certificate's key's over `data`. */
export function signatureVerifies(
  certificate: Buffer,
  hashByte: number,
  signatureByte: number,
  data: Buffer,
  signature: Buffer,
): boolean {
  const hash = HASHES[hashByte];
  let key: KeyObject;
  try {
    key = new X509Certificate(certificate).publicKey;
  } catch {
    return false;
  }
  if (!hash || key.asymmetricKeyType !== KEY_TYPES[signatureByte]) return false;
  try {
    // DER-encoded ECDSA and PKCS#1 v1.5 RSA, TLS 1.2's encodings and node's defaults.
    return verify(hash, data, key, signature);
  } catch {
    return false;
  }
}

/**
 * The server's check of the client's CertificateVerify (RFC 5246 §7.4.8): a signature over every handshake message
 * before it, as this side cached them (the same bytes werift's own client signs, DTLS headers included, RFC 6347
 * §4.2.6). `handshakes`: the cache when this side makes its Finished. Throws PeerSignatureError.
 */
export function checkCertificateVerify(handshakes: CachedHandshake[], clientCertificate: Buffer | undefined): void {
  const at = handshakes.findIndex((h) => h.msg_type === CERTIFICATE_VERIFY);
  if (at < 0) {
    // werift's server asks for a certificate (SDP fingerprints need one); a client that sent one must prove it.
    if (clientCertificate)
      throw new PeerSignatureError('client certificate without CertificateVerify', HANDSHAKE_FAILURE);
    return;
  }
  if (!clientCertificate) throw new PeerSignatureError('CertificateVerify without a certificate', HANDSHAKE_FAILURE);
  const body = handshakes[at]?.fragment ?? Buffer.alloc(0);
  // digitally-signed struct: hash (1), signature (1), length (2), signature.
  const length = body.length >= 4 ? body.readUInt16BE(2) : -1;
  if (length < 0 || body.length !== 4 + length)
    throw new PeerSignatureError('malformed CertificateVerify', DECRYPT_ERROR);
  const signed = Buffer.concat(handshakes.slice(0, at).map((h) => h.serialize()));
  if (!signatureVerifies(clientCertificate, body[0] ?? 0, body[1] ?? 0, signed, body.subarray(4)))
    throw new PeerSignatureError('CertificateVerify signature does not verify', DECRYPT_ERROR);
}

/**
 * The client's check of the ServerKeyExchange (RFC 4492 §5.4): a signature over the client random, the server
 * random and the server's ECDH parameters (curve type, curve, key length, key). Throws PeerSignatureError.
 */
export function checkServerKeyExchange(
  handshakes: CachedHandshake[],
  serverCertificate: Buffer | undefined,
  clientRandom: Buffer,
  serverRandom: Buffer,
): void {
  const message = handshakes.find((h) => h.msg_type === SERVER_KEY_EXCHANGE);
  if (!message || !serverCertificate)
    throw new PeerSignatureError('no ServerKeyExchange or server certificate', HANDSHAKE_FAILURE);
  const body = message.fragment;
  const keyLength = body[3] ?? 0;
  const paramsEnd = 4 + keyLength;
  const length = body.length >= paramsEnd + 4 ? body.readUInt16BE(paramsEnd + 2) : -1;
  if (body[0] !== 3 || length < 0 || body.length !== paramsEnd + 4 + length)
    throw new PeerSignatureError('malformed ServerKeyExchange', DECRYPT_ERROR);
  const signed = Buffer.concat([clientRandom, serverRandom, body.subarray(0, paramsEnd)]);
  const signature = body.subarray(paramsEnd + 4);
  if (!signatureVerifies(serverCertificate, body[paramsEnd] ?? 0, body[paramsEnd + 1] ?? 0, signed, signature))
    throw new PeerSignatureError('ServerKeyExchange signature does not verify', DECRYPT_ERROR);
}

/** TLS 1.2's PRF with SHA-256 (RFC 5246 §5): P_SHA256(secret, label + seed), cut to `length` bytes. */
export function prfSha256(secret: Buffer, label: string, seed: Buffer, length: number): Buffer {
  const labelled = Buffer.concat([Buffer.from(label, 'ascii'), seed]);
  const chunks: Buffer[] = [];
  let produced = 0;
  let a = labelled;
  while (produced < length) {
    a = createHmac('sha256', secret).update(a).digest();
    const chunk = createHmac('sha256', secret).update(a).update(labelled).digest();
    chunks.push(chunk);
    produced += chunk.length;
  }
  return Buffer.concat(chunks).subarray(0, length);
}

/**
 * A Finished's verify_data (RFC 5246 §7.4.9): PRF(master_secret, "client finished" or "server finished",
 * SHA-256(handshake messages)); in DTLS the messages with their handshake headers (RFC 6347 §4.2.6), as werift caches
 * them.
 */
export function finishedVerifyData(masterSecret: Buffer, sender: 'client' | 'server', transcript: Buffer): Buffer {
  const hash = createHash('sha256').update(transcript).digest();
  return prfSha256(masterSecret, `${sender} finished`, hash, VERIFY_DATA_LENGTH);
}

/**
 * The server's check of the client's Finished: its verify_data must be the PRF over every handshake message before
 * it, as this side cached them, under the master secret this side derived. A client that does not hold the keys it
 * claims, or saw other handshake messages than this side sent and received (a tampered or spliced transcript),
 * fails here. `handshakes`: the cache when this side makes its Finished. Throws PeerSignatureError.
 */
export function checkClientFinished(handshakes: CachedHandshake[], masterSecret: Buffer | undefined): void {
  const at = handshakes.findIndex((h) => h.msg_type === FINISHED);
  if (at < 0 || !masterSecret) throw new PeerSignatureError('no client Finished or master secret', HANDSHAKE_FAILURE);
  const received = handshakes[at]?.fragment ?? Buffer.alloc(0);
  const expected = finishedVerifyData(
    masterSecret,
    'client',
    Buffer.concat(handshakes.slice(0, at).map((h) => h.serialize())),
  );
  if (received.length !== expected.length || !timingSafeEqual(received, expected))
    throw new PeerSignatureError('client Finished does not verify', DECRYPT_ERROR);
}

/**
 * The client's check of the server's Finished (RFC 5246 §7.4.9): its verify_data must be the PRF over every
 * handshake message this side cached, its own Finished included. `handshakes`: the cache when the server's Finished
 * arrives. Throws PeerSignatureError.
 */
export function checkServerFinished(
  handshakes: CachedHandshake[],
  masterSecret: Buffer | undefined,
  received: Buffer,
): void {
  if (!masterSecret || !handshakes.some((h) => h.msg_type === FINISHED))
    throw new PeerSignatureError('no own Finished or master secret', HANDSHAKE_FAILURE);
  const expected = finishedVerifyData(masterSecret, 'server', Buffer.concat(handshakes.map((h) => h.serialize())));
  if (received.length !== expected.length || !timingSafeEqual(received, expected))
    throw new PeerSignatureError('server Finished does not verify', DECRYPT_ERROR);
}

/** A plaintext fatal alert record at the current epoch (this side has not sent its ChangeCipherSpec's Finished). */
function alertRecord(socket: SocketParts, description: number): Buffer {
  const record = Buffer.alloc(13 + 2);
  record[0] = ALERT;
  record[1] = 0xfe; // DTLS 1.2
  record[2] = 0xfd;
  record.writeUInt16BE(socket.dtls.epoch, 3);
  record.writeUIntBE(++socket.dtls.recordSequenceNumber, 5, 6);
  record.writeUInt16BE(2, 11);
  record[13] = FATAL;
  record[14] = description;
  return record;
}

const GUARDED = Symbol('hearth.dtls-peer-signature');

function isSocket(socket: unknown): socket is SocketParts {
  const s = socket as Partial<SocketParts> | undefined;
  return (
    typeof s?.onHandleHandshakes === 'function' &&
    typeof s.cipher?.verifyData === 'function' &&
    Array.isArray(s.dtls?.sortedHandshakeCache) &&
    typeof s.transport?.send === 'function'
  );
}

/**
 * Makes this DTLS socket (a werift DtlsServer or DtlsClient) check its peer's handshake signature — and, as server,
 * the client's Finished — before its own Finished, and as client the server's Finished before it calls itself
 * connected; `onRefused` hears of each handshake it aborts. After a refusal the socket ignores every later record:
 * a retransmitted Finished would otherwise make werift's server call itself connected.
 */
export function verifyPeerSignatures(socket: unknown, onRefused: (error: PeerSignatureError) => void = () => {}): void {
  if (!(socket instanceof DtlsServer || socket instanceof DtlsClient) || !isSocket(socket))
    throw new Error(
      'dtls-peer-signature: not a werift DTLS socket with the expected parts (docs/voice.md#join-admission)',
    );
  const server = socket instanceof DtlsServer;
  let refused = false;
  const guard = (cipher: CipherParts & { [GUARDED]?: true }) => {
    if (cipher[GUARDED]) return;
    cipher[GUARDED] = true;
    const verifyData = cipher.verifyData;
    cipher.verifyData = (buf) => {
      try {
        const handshakes = socket.dtls.sortedHandshakeCache;
        if (server) {
          checkCertificateVerify(handshakes, cipher.remoteCertificate);
          checkClientFinished(handshakes, cipher.masterSecret);
        } else
          checkServerKeyExchange(
            handshakes,
            cipher.remoteCertificate,
            cipher.localRandom?.serialize() ?? Buffer.alloc(0),
            cipher.remoteRandom?.serialize() ?? Buffer.alloc(0),
          );
      } catch (error) {
        const refusal =
          error instanceof PeerSignatureError ? error : new PeerSignatureError(String(error), HANDSHAKE_FAILURE);
        refused = true;
        socket.transport.send(alertRecord(socket, refusal.alert)).catch(() => {});
        onRefused(refusal);
        // werift turns this into its socket's onError: the DTLS transport goes `failed`.
        throw refusal;
      }
      return verifyData.call(cipher, buf);
    };
  };
  guard(socket.cipher);
  const handle = socket.onHandleHandshakes;
  socket.onHandleHandshakes = async (assembled) => {
    if (refused) return;
    // A renegotiation gives the socket a new CipherContext.
    guard(socket.cipher);
    // As client, the server's Finished is checked before werift calls the socket connected. No alert: this side
    // already writes at epoch 1, and werift's record encryption is not reachable from here; the socket fails.
    const finished = server || socket.connected ? undefined : assembled.find((h) => h.msg_type === FINISHED);
    if (finished) {
      try {
        checkServerFinished(socket.dtls.sortedHandshakeCache, socket.cipher.masterSecret, finished.fragment);
      } catch (error) {
        const refusal =
          error instanceof PeerSignatureError ? error : new PeerSignatureError(String(error), HANDSHAKE_FAILURE);
        refused = true;
        onRefused(refusal);
        // werift turns this into its socket's onError: the DTLS transport goes `failed`.
        throw refusal;
      }
    }
    return handle(assembled);
  };
}

/**
 * Whether werift's client makes its Finished the way `checkClientFinished` expects it: the same verify_data for a
 * made-up master secret and transcript (the client's Finished is checked against this very computation).
 */
function clientFinishedMatches(cipher: CipherParts): boolean {
  const masterSecret = Buffer.alloc(48, 0x5a);
  const transcript = Buffer.from('hearth: client finished check');
  const saved = cipher.masterSecret;
  cipher.masterSecret = masterSecret;
  try {
    const made = Buffer.from(cipher.verifyData(transcript));
    return made.equals(finishedVerifyData(masterSecret, 'client', transcript));
  } catch {
    return false;
  } finally {
    cipher.masterSecret = saved;
  }
}

/**
 * Throws, naming what is missing, when werift's DTLS sockets no longer have the parts `verifyPeerSignatures` hooks:
 * a werift upgrade must not silently bring back handshakes whose peer proves nothing. Called where werift is first
 * loaded (`participant.ts`).
 */
export function checkPeerSignatureHooks(): void {
  const transport = { send: async () => {}, close: async () => {} };
  const missing: string[] = [];
  for (const [name, make] of [
    ['DtlsServer', () => new DtlsServer({ transport } as never)],
    ['DtlsClient', () => new DtlsClient({ transport } as never)],
  ] as const) {
    let socket: unknown;
    try {
      socket = make();
    } catch {
      missing.push(name);
      continue;
    }
    const s = socket as Partial<SocketParts>;
    if (typeof s.onHandleHandshakes !== 'function') missing.push(`${name}.onHandleHandshakes`);
    if (typeof s.cipher?.verifyData !== 'function') missing.push(`${name}.cipher.verifyData`);
    if (!Array.isArray(s.dtls?.sortedHandshakeCache)) missing.push(`${name}.dtls.sortedHandshakeCache`);
    if (typeof s.dtls?.recordSequenceNumber !== 'number') missing.push(`${name}.dtls.recordSequenceNumber`);
    if (typeof s.transport?.send !== 'function') missing.push(`${name}.transport.send`);
    if (typeof s.connected !== 'boolean') missing.push(`${name}.connected`);
    if (name === 'DtlsClient' && typeof s.cipher?.verifyData === 'function' && !clientFinishedMatches(s.cipher))
      missing.push(`${name}.cipher.verifyData as TLS 1.2's PRF-SHA256 "client finished"`);
  }
  if (missing.length > 0)
    throw new Error(`dtls-peer-signature: werift no longer has ${missing.join(', ')} (docs/voice.md#join-admission)`);
}
