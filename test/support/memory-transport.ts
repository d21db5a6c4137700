/**
 * A pair of in-memory transports in the shape werift's DTLS sockets take (`send`, `onData`, `close`): what one end
 * sends reaches the other on the next turn of the event loop, and each end keeps what it sent (tests read the
 * handshake records). Real handshakes without sockets, for the voice unit tests.
 */
export interface MemoryTransport {
  type: string;
  address: { address: string; family: string; port: number };
  closed: boolean;
  peer: MemoryTransport | undefined;
  sent: Buffer[];
  onData: (data: Buffer) => void;
  send: (data: Buffer) => Promise<void>;
  close: () => Promise<void>;
}

function memoryTransport(): MemoryTransport {
  const transport: MemoryTransport = {
    type: 'memory',
    address: { address: '127.0.0.1', family: 'IPv4', port: 0 },
    closed: false,
    peer: undefined,
    sent: [],
    onData: () => {},
    send: async (data) => {
      transport.sent.push(Buffer.from(data));
      const peer = transport.peer;
      if (!transport.closed && peer) setImmediate(() => peer.onData(Buffer.from(data)));
    },
    close: async () => {
      transport.closed = true;
    },
  };
  return transport;
}

/** Two connected ends. */
export function memoryTransportPair(): readonly [MemoryTransport, MemoryTransport] {
  const ends = [memoryTransport(), memoryTransport()] as const;
  ends[0].peer = ends[1];
  ends[1].peer = ends[0];
  return ends;
}
