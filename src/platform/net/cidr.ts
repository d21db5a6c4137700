import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Addresses and ranges (trusted proxies, ban exemptions, manual bans) on ipaddr.js. Node's `isIP` decides what
 * is an address (strict dotted-quad and RFC 4291 text: no `10.1`, no hex octets); IPv4-mapped IPv6 addresses
 * (::ffff:a.b.c.d) are the IPv4 address they carry.
 */
export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed address range: its canonical text, network address (host bits cleared) and prefix length. */
export interface Cidr {
  text: string;
  network: Address;
  prefix: number;
}

/**
 * ipaddr.js reads every IPv6 text with a dotted tail as IPv4-mapped (`::1.2.3.4` as `::ffff:1.2.3.4`): the tail
 * is written as two hex groups first, so the deprecated IPv4-compatible form stays the IPv6 address it is.
 */
function parseValid(text: string): Address {
  const hexTail = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((group) => group.toString(16)).join(':'),
  );
  return ipaddr.parse(isIP(text) === 6 ? hexTail : text);
}

/** The address, unmapped; undefined for anything that is not one. */
export function parseAddress(text: string): Address | undefined {
  if (isIP(text) === 0) return undefined;
  const address = parseValid(text);
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

export function isIPv4Address(address: string): boolean {
  return parseAddress(address)?.kind() === 'ipv4';
}

export function parseCidr(text: string): Cidr {
  const trimmed = text.trim();
  const [addressText = '', prefixText] = trimmed.split('/');
  // Dotted text (a.b.c.d or ::ffff:a.b.c.d) takes an IPv4 prefix; a hex-written mapped range (::ffff:0:0/96)
  // stays an IPv6 range, which holds the IPv4 addresses whose mapped form it covers.
  const dotted = isIP(addressText) === 4 || (/^::ffff:/i.test(addressText) && isIP(addressText.slice(7)) === 4);
  const address =
    dotted || prefixText === undefined
      ? parseAddress(addressText)
      : isIP(addressText)
        ? parseValid(addressText)
        : undefined;
  if (!address) throw new Error(`"${text}" is not an IP address or CIDR`);
  const maxPrefix = address.kind() === 'ipv4' ? 32 : 128;
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(maxPrefix)) || prefix > maxPrefix)
    throw new Error(`"${text}" has a bad prefix length`);
  // Host bits cleared on the bytes (a text round trip would meet the dotted-tail reading again).
  const bytes = address.toByteArray().map((byte, index) => {
    const kept = Math.min(8, Math.max(0, prefix - index * 8));
    return byte & ((0xff << (8 - kept)) & 0xff);
  });
  const network = ipaddr.fromByteArray(bytes);
  return { text: trimmed, network, prefix };
}

export function parseCidrList(text: string): Cidr[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map(parseCidr);
}

/** An IPv4 address also lies in an IPv6 range that covers its mapped form (::ffff:0:0/96, ::/0). */
export function cidrContains(cidr: Cidr, text: string): boolean {
  const address = parseAddress(text);
  if (!address) return false;
  if (address.kind() === cidr.network.kind()) return address.match(cidr.network, cidr.prefix);
  if (address.kind() === 'ipv4') return (address as ipaddr.IPv4).toIPv4MappedAddress().match(cidr.network, cidr.prefix);
  return false;
}

export function anyCidrContains(cidrs: readonly Cidr[], address: string): boolean {
  return cidrs.some((cidr) => cidrContains(cidr, address));
}

/** Canonical text of a range: RFC 5952 for IPv6, and a full-length prefix written as the bare address. */
export function cidrText(cidr: Cidr): string {
  const address =
    cidr.network.kind() === 'ipv6' ? (cidr.network as ipaddr.IPv6).toRFC5952String() : cidr.network.toString();
  return cidr.prefix === (cidr.network.kind() === 'ipv4' ? 32 : 128) ? address : `${address}/${cidr.prefix}`;
}

/** The rate-limit and ban key of an address: exact for IPv4, the /64 for IPv6 (docs/conventions.md#policies). */
export function ipKey(text: string): string {
  const address = parseAddress(text);
  if (!address) return text;
  if (address.kind() === 'ipv4') return address.toString();
  const groups = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${groups.join(':')}::/64`;
}
