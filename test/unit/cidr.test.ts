import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  anyCidrContains,
  cidrContains,
  cidrText,
  ipKey,
  parseAddress,
  parseCidr,
  parseCidrList,
} from '../../src/platform/net/cidr.ts';

describe('ipKey', () => {
  it('keeps IPv4 addresses exact', () => {
    assert.equal(ipKey('203.0.113.7'), '203.0.113.7');
    assert.equal(ipKey('10.0.0.1'), '10.0.0.1');
  });

  it('unmaps IPv4-mapped IPv6 addresses to the IPv4 key', () => {
    assert.equal(ipKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(ipKey('::ffff:127.0.0.1'), '127.0.0.1');
  });

  it('keys IPv6 addresses by their /64', () => {
    assert.equal(ipKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(ipKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
    assert.equal(ipKey('2001:0db8:0001:0002:0000:0000:0000:0009'), '2001:db8:1:2::/64');
    assert.notEqual(ipKey('2001:db8:1:3::1'), ipKey('2001:db8:1:2::1'));
    assert.equal(ipKey('::1'), '0:0:0:0::/64');
    assert.equal(ipKey('fe80::1'), 'fe80:0:0:0::/64');
  });

  it('leaves a non-address unchanged rather than throwing', () => {
    assert.equal(ipKey('not-an-ip'), 'not-an-ip');
    assert.equal(ipKey(''), '');
  });
});

describe('CIDR parsing and matching', () => {
  it('parses IPv4 and IPv6 ranges and single addresses', () => {
    assert.equal(parseCidr('10.0.0.0/8').prefix, 8);
    assert.equal(parseCidr('127.0.0.1').prefix, 32);
    assert.equal(parseCidr('::ffff:10.0.0.0/8').prefix, 8);
    assert.equal(parseCidr('::1').prefix, 128);
    assert.equal(parseCidr('2001:db8::/32').prefix, 32);
    assert.equal(parseCidr(' 192.168.0.0/16 ').text, '192.168.0.0/16');
  });

  it('matches addresses inside the range only', () => {
    const v4 = parseCidr('10.1.0.0/16');
    assert.ok(cidrContains(v4, '10.1.255.255'));
    assert.ok(cidrContains(v4, '::ffff:10.1.2.3'));
    assert.ok(!cidrContains(v4, '10.2.0.0'));
    assert.ok(!cidrContains(v4, 'garbage'));
    const v6 = parseCidr('2001:db8::/32');
    assert.ok(cidrContains(v6, '2001:db8:ffff::1'));
    assert.ok(!cidrContains(v6, '2001:db9::1'));
    assert.ok(cidrContains(parseCidr('0.0.0.0/0'), '8.8.8.8'));
    assert.ok(!cidrContains(parseCidr('0.0.0.0/0'), '2001:db8::1'));
    assert.ok(cidrContains(parseCidr('::/0'), '2001:db8::1'));
    assert.ok(anyCidrContains(parseCidrList('10.0.0.0/8, 127.0.0.1/32'), '127.0.0.1'));
    assert.ok(!anyCidrContains([], '127.0.0.1'));
  });

  it('masks host bits of the network address', () => {
    assert.ok(cidrContains(parseCidr('10.1.2.3/16'), '10.1.200.1'));
  });

  it('rejects bad input with a message naming the value', () => {
    assert.throws(() => parseCidr('10.0.0.0/33'), /bad prefix length/);
    assert.throws(() => parseCidr('2001:db8::/129'), /bad prefix length/);
    assert.throws(() => parseCidr('10.0.0.0/x'), /bad prefix length/);
    assert.throws(() => parseCidr('example.com'), /not an IP address/);
    assert.deepEqual(parseCidrList(' , '), []);
  });

  it('reads strict address text only, IPv4-mapped addresses as the IPv4 address', () => {
    assert.equal(parseAddress('::ffff:1.2.3.4')?.toString(), '1.2.3.4');
    assert.equal(parseAddress('2001:0DB8::0001')?.kind(), 'ipv6');
    // The deprecated IPv4-compatible form is not the IPv4 address (ipaddr.js alone would read it as mapped).
    assert.equal(parseAddress('::1.2.3.4')?.toString(), '::102:304');
    assert.ok(!cidrContains(parseCidr('1.2.3.4'), '::1.2.3.4'));
    assert.equal(parseAddress('64:ff9b::1.2.3.4')?.toString(), '64:ff9b::102:304');
    for (const loose of ['10.1', '0x0a.0.0.1', '010.0.0.1', 'nope', '[::1]', ''])
      assert.equal(parseAddress(loose), undefined);
  });

  it('puts IPv4 addresses inside IPv6 ranges that cover their mapped form', () => {
    assert.ok(cidrContains(parseCidr('::ffff:0:0/96'), '10.0.0.1'));
    assert.ok(cidrContains(parseCidr('::/0'), '10.0.0.1'));
    assert.ok(!cidrContains(parseCidr('2001:db8::/32'), '10.0.0.1'));
    assert.ok(!cidrContains(parseCidr('10.0.0.0/8'), '2001:db8::1'));
  });

  it('writes a range canonically: host bits cleared, RFC 5952, bare address for a full prefix', () => {
    assert.equal(cidrText(parseCidr('10.0.0.7/8')), '10.0.0.0/8');
    assert.equal(cidrText(parseCidr('10.0.0.7/32')), '10.0.0.7');
    assert.equal(cidrText(parseCidr('::ffff:10.0.0.7')), '10.0.0.7');
    assert.equal(cidrText(parseCidr('2001:0DB8:0:0:1:0:0:1/128')), '2001:db8::1:0:0:1');
    assert.equal(cidrText(parseCidr('2001:db8:0:0:0:0:0:1/32')), '2001:db8::/32');
  });
});
