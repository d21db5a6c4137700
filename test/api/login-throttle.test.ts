import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { request, uniqueEmail } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Login throttling (docs/accounts.md): strangers guessing an account's password from many addresses cannot lock
 * its owner out of an address the account has used, and cannot speed up their guessing either.
 */

let server: TestServer;
const from = (ip: string) => ({ 'x-forwarded-for': ip, 'x-test-strict': 'true' });

before(async () => {
  server = await startTestServer({ HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' });
});
after(() => server?.close());

function login(email: string, password: string, ip: string) {
  return request(server, 'POST', '/v1/auth/login', { body: { email, password }, headers: from(ip) });
}

it('guesses from many addresses exhaust only the strangers’ allowance; the owner’s address still signs in', async () => {
  const email = uniqueEmail('owner');
  const password = 'the owner password';
  const home = '203.0.113.10';
  const registered = await request(server, 'POST', '/v1/auth/register', {
    body: { email, password, username: 'owner' },
    headers: from(home),
  });
  assert.equal(registered.status, 200, registered.text);

  for (let i = 0; i < 5; i++) {
    const guess = await login(email, `wrong guess ${i}`, `198.51.100.${i + 1}`);
    assert.equal(guess.status, 400, guess.text);
    assert.equal(guess.body.code, 'INVALID_FORM_BODY');
  }
  const sixth = await login(email, 'wrong guess 6', '198.51.100.6');
  assert.equal(sixth.status, 429, sixth.text);
  assert.equal(sixth.body.code, 'RATE_LIMITED');

  // A stranger holding the right password is still held back: guessing is no faster than before.
  const stranger = await login(email, password, '198.51.100.7');
  assert.equal(stranger.status, 429, stranger.text);

  // The owner, from the address the account registered from, is not locked out.
  const owner = await login(email, password, home);
  assert.equal(owner.status, 200, owner.text);
  assert.equal(owner.body.user_id, registered.body.user_id);
});

it('one address guessing one account is held back after five wrong passwords, known address or not', async () => {
  const email = uniqueEmail('owner');
  const password = 'the owner password';
  const home = '203.0.113.20';
  const registered = await request(server, 'POST', '/v1/auth/register', {
    body: { email, password, username: 'owner2' },
    headers: from(home),
  });
  assert.equal(registered.status, 200, registered.text);
  for (let i = 0; i < 5; i++) assert.equal((await login(email, `wrong ${i}`, home)).status, 400);
  const limited = await login(email, password, home);
  assert.equal(limited.status, 429, limited.text);
  assert.equal(limited.headers.get('x-ratelimit-limit'), '5');
});
