import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  anyCidrContains,
  cidrContains,
  ipKey,
  ipToBigInt,
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
    assert.equal(parseCidr('10.0.0.0/8').prefix, 96 + 8);
    assert.equal(parseCidr('127.0.0.1').prefix, 128);
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

  it('converts addresses to 128-bit integers, IPv4 mapped into ::ffff:0:0/96', () => {
    assert.equal(ipToBigInt('0.0.0.1'), 0xffff00000001n);
    assert.equal(ipToBigInt('::ffff:0.0.0.1'), 0xffff00000001n);
    assert.equal(ipToBigInt('::1'), 1n);
    assert.equal(ipToBigInt('::ffff:1.2.3.4'), ipToBigInt('1.2.3.4'));
    assert.equal(ipToBigInt('64:ff9b::1.2.3.4'), (0x64ff9bn << 96n) | 0x01020304n);
    assert.equal(ipToBigInt('nope'), undefined);
  });
});
