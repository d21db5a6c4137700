import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNonPublicAddress as isPrivateAddress } from '../../src/platform/net/non-public.ts';

test('IPv6 forms that embed an IPv4 address are refused', () => {
  for (const address of [
    '::127.0.0.1',
    '::7f00:1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::',
    '::1',
    '2002:7f00:1::',
    '2002:c0a8:101::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '64:ff9b::7f00:1',
    '64:ff9b:1::1',
    '100::1',
  ])
    assert.equal(isPrivateAddress(address), true, address);
});

test('public addresses pass', () => {
  for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '2a00:1450:4001:81b::200e'])
    assert.equal(isPrivateAddress(address), false, address);
});
