import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalApiUrl } from '../../src/http/server.ts';

test('/v9 and /v10 are rewritten to /v1; other prefixes and look-alikes are not', () => {
  assert.equal(canonicalApiUrl('/v10/users/@me'), '/v1/users/@me');
  assert.equal(canonicalApiUrl('/v9/gateway/bot?x=1'), '/v1/gateway/bot?x=1');
  assert.equal(canonicalApiUrl('/v10'), '/v1');
  assert.equal(canonicalApiUrl('/v1/users/@me'), '/v1/users/@me');
  assert.equal(canonicalApiUrl('/v100/users'), '/v100/users');
  assert.equal(canonicalApiUrl('/v2/users'), '/v2/users');
  assert.equal(canonicalApiUrl('/media/v10/x'), '/media/v10/x');
});

test('%40me is @me only as a whole path segment, and the query is untouched', () => {
  assert.equal(canonicalApiUrl('/v10/users/%40me'), '/v1/users/@me');
  assert.equal(canonicalApiUrl('/v1/users/%40me/guilds?after=%40me'), '/v1/users/@me/guilds?after=%40me');
  assert.equal(canonicalApiUrl('/v1/users/%40Me'), '/v1/users/%40Me');
  assert.equal(canonicalApiUrl('/v1/users/%40meh'), '/v1/users/%40meh');
  assert.equal(canonicalApiUrl('/v1/webhooks/1/%40me'), '/v1/webhooks/1/@me');
});
