import { type ChildProcess, fork } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  CipherContext,
  DtlsClient,
  DtlsServer,
  type DtlsSocket,
  HashAlgorithm,
  NamedCurveAlgorithm,
  ProtectionProfileAeadAes128Gcm,
  SignatureAlgorithm,
} from 'werift';

/**
 * What a werift DTLS handshake costs the SFU's process in CPU, werift's own public-key code against the SFU's
 * node:crypto replacement (src/domains/voice/sfu/werift-native-crypto.ts), alternated in one process:
 * `npm run bench:dtls` (`DTLS_BENCH_HANDSHAKES`, per variant and role, default 200; `DTLS_BENCH_BLOCK`, handshakes
 * per block, default 25; `DTLS_BENCH_VARIANT=werift|native` and `DTLS_BENCH_ROLE=server|client` run only one, e.g.
 * under `--cpu-prof`). The measured side runs handshakes one after another over
 * loopback UDP with its certificate made once (as the SFU's); the peer is another process running plain werift,
 * so each handshake is also an interop check against the unpatched implementation. Both roles: the SFU is the DTLS
 * server with browsers (they answer `a=setup:active`) and would be the client with a peer that answers `passive`.
 * CPU is this process's (user + system) over the block, divided by the handshakes; it includes the bench's own
 * UDP socket and message to the peer per handshake, the same for both. Then each replaced step alone, both ways.
 */

type Role = 'server' | 'client';
type PeerCommand = { op: 'client'; port: number } | { op: 'server' } | { op: 'exit' };
type PeerReply = { op: 'port'; port: number } | { op: 'connected' } | { op: 'failed'; error: string };

const signatureHash = { signature: SignatureAlgorithm.ecdsa_3, hash: HashAlgorithm.sha256_4 };
const certificate = () =>
  CipherContext.createSelfSignedCertificateWithKey(signatureHash, NamedCurveAlgorithm.secp256r1_23);

interface UdpTransport {
  type: string;
  address: { address: string; family: string; port: number };
  closed: boolean;
  onData: (data: Buffer) => void;
  send: (data: Buffer) => Promise<void>;
  close: () => Promise<void>;
}

/** A werift transport on a UDP socket of its own; it answers whoever sent the last datagram (the server's case). */
async function udpTransport(peerPort?: number): Promise<{ transport: UdpTransport; port: number }> {
  const socket: Socket = createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  let remote = peerPort;
  const transport: UdpTransport = {
    type: 'udp',
    address: { address: '127.0.0.1', family: 'IPv4', port: 0 },
    closed: false,
    onData: () => {},
    send: (data) =>
      new Promise((resolve) => {
        if (transport.closed || remote === undefined) return resolve();
        socket.send(data, remote, '127.0.0.1', () => resolve());
      }),
    close: async () => {
      transport.closed = true;
      socket.close();
    },
  };
  socket.on('message', (data, info) => {
    remote = info.port;
    transport.onData(data);
  });
  return { transport, port: socket.address().port };
}

function endpoint(role: Role, cert: { certPem: string; keyPem: string }, transport: UdpTransport): DtlsSocket {
  const options = {
    cert: cert.certPem,
    key: cert.keyPem,
    signatureHash,
    transport,
    srtpProfiles: [ProtectionProfileAeadAes128Gcm],
    extendedMasterSecret: true,
  };
  // As werift's RTCDtlsTransport sets them up.
  return role === 'server' ? new DtlsServer({ ...options, certificateRequest: true }) : new DtlsClient(options);
}

function connected(socket: DtlsSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.onConnect.once(() => resolve());
    socket.onError.once((error) => reject(error));
  });
}

/** The peer process: plain werift, never the replacement. */
async function peer(): Promise<void> {
  const cert = await certificate();
  const reply = (message: PeerReply) => process.send?.(message);
  process.on('message', async (command: PeerCommand) => {
    if (command.op === 'exit') process.exit(0);
    const { transport, port } = await udpTransport(command.op === 'client' ? command.port : undefined);
    const socket = endpoint(command.op, cert, transport);
    const done = connected(socket);
    if (command.op === 'server') reply({ op: 'port', port });
    // Not awaited: werift's flight resolves only after its first retransmission interval (500 ms).
    else (socket as DtlsClient).connect().catch(() => {});
    try {
      await done;
      reply({ op: 'connected' });
    } catch (error) {
      reply({ op: 'failed', error: String(error) });
    }
    setTimeout(() => socket.close(), 200);
  });
}

function nextReply(child: ChildProcess): Promise<PeerReply> {
  return once(child, 'message').then(([message]) => message as PeerReply);
}

/** One handshake with this process in `role`; resolves when both ends are connected. */
async function handshake(child: ChildProcess, role: Role, cert: { certPem: string; keyPem: string }): Promise<void> {
  let socket: DtlsSocket;
  if (role === 'server') {
    const { transport, port } = await udpTransport();
    socket = endpoint('server', cert, transport);
    const done = connected(socket);
    const peerDone = nextReply(child);
    child.send({ op: 'client', port } satisfies PeerCommand);
    await done;
    const reply = await peerDone;
    if (reply.op !== 'connected') throw new Error(`peer: ${JSON.stringify(reply)}`);
  } else {
    const portReply = nextReply(child);
    child.send({ op: 'server' } satisfies PeerCommand);
    const reply = await portReply;
    if (reply.op !== 'port') throw new Error(`peer: ${JSON.stringify(reply)}`);
    const peerDone = nextReply(child);
    const { transport } = await udpTransport(reply.port);
    socket = endpoint('client', cert, transport);
    const done = connected(socket);
    (socket as DtlsClient).connect().catch(() => {});
    await done;
    const last = await peerDone;
    if (last.op !== 'connected') throw new Error(`peer: ${JSON.stringify(last)}`);
  }
  setTimeout(() => socket.close(), 200);
}

async function main(): Promise<void> {
  const { installNativeDtlsCrypto, uninstallNativeDtlsCrypto } = await import(
    '../src/domains/voice/sfu/werift-native-crypto.ts'
  );
  const total = Number(process.env.DTLS_BENCH_HANDSHAKES ?? 200);
  const block = Number(process.env.DTLS_BENCH_BLOCK ?? 25);
  const child = fork(fileURLToPath(import.meta.url), ['peer'], { execArgv: ['--import', 'tsx'] });
  const cert = await certificate();
  const load = [loadavg()[0]];
  const variants = Object.fromEntries(
    Object.entries({ werift: uninstallNativeDtlsCrypto, native: installNativeDtlsCrypto }).filter(
      ([name]) => !process.env.DTLS_BENCH_VARIANT || process.env.DTLS_BENCH_VARIANT === name,
    ),
  );
  const roles = (process.env.DTLS_BENCH_ROLE ? [process.env.DTLS_BENCH_ROLE] : ['server', 'client']) as Role[];
  const results: Record<string, { cpuMs: number; wallMs: number; count: number }> = {};
  for (const role of roles) {
    // Warm-up of both variants (JIT, the certificate's first use).
    for (const use of Object.values(variants)) {
      use();
      for (let i = 0; i < 5; i++) await handshake(child, role, cert);
    }
    for (let done = 0; done < total; done += block) {
      for (const [name, use] of Object.entries(variants)) {
        use();
        const started = performance.now();
        const cpu = process.cpuUsage();
        for (let i = 0; i < block; i++) await handshake(child, role, cert);
        const used = process.cpuUsage(cpu);
        const key = `${role} ${name}`;
        const entry = results[key] ?? { cpuMs: 0, wallMs: 0, count: 0 };
        entry.cpuMs += (used.user + used.system) / 1000;
        entry.wallMs += performance.now() - started;
        entry.count += block;
        results[key] = entry;
      }
    }
  }
  load.push(loadavg()[0]);
  child.send({ op: 'exit' } satisfies PeerCommand);
  const primitives = Object.entries(variants).map(([name, use]) => {
    use();
    return `${name}: ${primitiveCosts(cert)}`;
  });
  console.log(`Node ${process.version}, load average (1 min) ${load.map((l) => l?.toFixed(2)).join(' → ')}`);
  for (const role of ['server', 'client']) {
    const werift = results[`${role} werift`];
    const native = results[`${role} native`];
    if (!werift || !native) continue;
    const per = (r: typeof werift) =>
      `${(r.cpuMs / r.count).toFixed(2)} ms CPU, ${(r.wallMs / r.count).toFixed(1)} ms wall`;
    console.log(
      `SFU as DTLS ${role}: werift ${per(werift)}; native ${per(native)} per handshake (${werift.count} each); ` +
        `CPU ratio ${(werift.cpuMs / native.cpuMs).toFixed(2)}`,
    );
  }
  console.log(`Each step alone, ms CPU: ${primitives.join('; ')}`);
}

/** The replaced steps one by one, as werift calls them (whichever variant is installed). */
function primitiveCosts(cert: { certPem: string; keyPem: string }): string {
  interface Nacl {
    scalarMult(n: Uint8Array, p: Uint8Array): Uint8Array;
    box: { keyPair(): { publicKey: Uint8Array; secretKey: Uint8Array } };
  }
  const nacl = createRequire(import.meta.resolve('werift'))('tweetnacl') as Nacl;
  const peerKey = nacl.box.keyPair().publicKey;
  const data = Buffer.alloc(200, 1);
  const cost = (run: () => unknown, times = 100) => {
    for (let i = 0; i < 5; i++) run();
    const cpu = process.cpuUsage();
    for (let i = 0; i < times; i++) run();
    const used = process.cpuUsage(cpu);
    return ((used.user + used.system) / 1000 / times).toFixed(3);
  };
  const context = () => new CipherContext(2, cert.certPem, cert.keyPem, signatureHash);
  return [
    `X25519 key pair ${cost(() => nacl.box.keyPair())}`,
    `shared secret ${cost(() => nacl.scalarMult(Buffer.from(nacl.box.keyPair().secretKey.buffer), peerKey))} (with its key pair)`,
    `certificate parse ${cost(context)}`,
    `ECDSA signature ${cost(() => context().localPrivateKey.sign(data, 'sha256'))} (with the parse)`,
  ].join(', ');
}

if (process.argv[2] === 'peer') await peer();
else await main();
