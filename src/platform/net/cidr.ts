import { isIP } from 'node:net';

/** A parsed address range; addresses are compared as bigints, IPv4 mapped into ::ffff:0:0/96. */
export interface Cidr {
  text: string;
  network: bigint;
  prefix: number;
}

export function ipToBigInt(address: string): bigint | undefined {
  const unmapped = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const family = isIP(unmapped);
  if (family === 4) {
    const parts = unmapped.split('.').map(Number);
    const v4 = parts.reduce((acc, part) => (acc << 8n) | BigInt(part), 0n);
    return (0xffffn << 32n) | v4;
  }
  if (family === 6) {
    const [head = '', tail] = unmapped.split('::');
    const parse = (s: string) => (s === '' ? [] : s.split(':'));
    let headParts = parse(head);
    let tailParts = tail === undefined ? [] : parse(tail);
    // An embedded dotted IPv4 tail takes two groups.
    const expand = (parts: string[]) =>
      parts.flatMap((p) => {
        if (!p.includes('.')) return [p];
        const n = p.split('.').map(Number);
        return [((n[0]! << 8) | n[1]!).toString(16), ((n[2]! << 8) | n[3]!).toString(16)];
      });
    headParts = expand(headParts);
    tailParts = expand(tailParts);
    const missing = 8 - headParts.length - tailParts.length;
    const groups = tail === undefined ? headParts : [...headParts, ...Array(missing).fill('0'), ...tailParts];
    return groups.reduce((acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
  }
  return undefined;
}

export function isIPv4Address(address: string): boolean {
  return isIP(address) === 4 || (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4);
}

export function parseCidr(text: string): Cidr {
  const [addr = '', prefixText] = text.trim().split('/');
  const value = ipToBigInt(addr);
  if (value === undefined) throw new Error(`"${text}" is not an IP address or CIDR`);
  const v4 = isIPv4Address(addr);
  const maxPrefix = v4 ? 32 : 128;
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(maxPrefix)) || prefix > maxPrefix)
    throw new Error(`"${text}" has a bad prefix length`);
  const fullPrefix = v4 ? prefix + 96 : prefix;
  const mask = fullPrefix === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - fullPrefix)) - 1n);
  return { text: text.trim(), network: value & mask, prefix: fullPrefix };
}

export function parseCidrList(text: string): Cidr[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map(parseCidr);
}

export function cidrContains(cidr: Cidr, address: string): boolean {
  const value = ipToBigInt(address);
  if (value === undefined) return false;
  const mask = cidr.prefix === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - cidr.prefix)) - 1n);
  return (value & mask) === cidr.network;
}

export function anyCidrContains(cidrs: readonly Cidr[], address: string): boolean {
  return cidrs.some((cidr) => cidrContains(cidr, address));
}

/** The rate-limit and ban key of an address: exact for IPv4, the /64 for IPv6 (docs/conventions.md#policies). */
export function ipKey(address: string): string {
  const unmapped = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  if (isIP(unmapped) === 4) return unmapped;
  const value = ipToBigInt(unmapped);
  if (value === undefined) return unmapped;
  const prefix = value >> 64n;
  const groups: string[] = [];
  for (let i = 3; i >= 0; i--) groups.push(((prefix >> BigInt(i * 16)) & 0xffffn).toString(16));
  return `${groups.join(':')}::/64`;
}
