import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientIp } from '../../src/http/client-ip.ts';
import { parseCidrList } from '../../src/platform/net/cidr.ts';

const PROXIES = parseCidrList('127.0.0.1/32, 10.0.0.0/8, fd00::/8');

describe('clientIp', () => {
  it('uses the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    assert.equal(clientIp('198.51.100.1', '203.0.113.9', []), '198.51.100.1');
    assert.equal(clientIp('::ffff:198.51.100.1', undefined, []), '198.51.100.1');
  });

  it('uses the socket address when the peer is not a trusted proxy', () => {
    assert.equal(clientIp('198.51.100.1', '203.0.113.9', PROXIES), '198.51.100.1');
  });

  it('takes the right-most hop that is not itself a trusted proxy', () => {
    assert.equal(clientIp('127.0.0.1', '203.0.113.9', PROXIES), '203.0.113.9');
    assert.equal(clientIp('127.0.0.1', '1.1.1.1, 203.0.113.9', PROXIES), '203.0.113.9');
    assert.equal(clientIp('127.0.0.1', '1.1.1.1, 203.0.113.9, 10.1.2.3', PROXIES), '203.0.113.9');
    assert.equal(clientIp('::ffff:127.0.0.1', '203.0.113.9,10.0.0.2', PROXIES), '203.0.113.9');
    assert.equal(clientIp('127.0.0.1', ['1.1.1.1', '203.0.113.9'], PROXIES), '203.0.113.9');
    assert.equal(clientIp('fd00::1', '2001:db8::5', PROXIES), '2001:db8::5');
  });

  it('unmaps IPv4-mapped hops', () => {
    assert.equal(clientIp('127.0.0.1', '::ffff:203.0.113.9', PROXIES), '203.0.113.9');
  });

  it('never fails on a missing or garbled header', () => {
    assert.equal(clientIp('127.0.0.1', undefined, PROXIES), '127.0.0.1');
    assert.equal(clientIp('127.0.0.1', '', PROXIES), '127.0.0.1');
    assert.equal(clientIp('127.0.0.1', 'garbage, , %%', PROXIES), '127.0.0.1');
    assert.equal(clientIp('127.0.0.1', 'garbage, 203.0.113.9', PROXIES), '203.0.113.9');
    assert.equal(clientIp(undefined, undefined, []), '0.0.0.0');
  });

  it('falls back to the left-most hop when every hop is trusted', () => {
    assert.equal(clientIp('127.0.0.1', '10.0.0.5, 10.0.0.6', PROXIES), '10.0.0.5');
  });
});
