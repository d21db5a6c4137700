import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { RtpHeader, RtpPacket, SrtpSession } from 'werift';
import {
  SRTP_AEAD_AES_128_GCM,
  SRTP_AES128_CM_HMAC_SHA1_80,
  SrtpProtector,
} from '../../src/domains/voice/sfu/srtp-protect.ts';

/**
 * The SFU's own SRTP protection (docs/voice.md#capacity) against werift's: for both profiles the same packet must
 * come out byte for byte as werift's, and the receiving side (werift's decryption, as a Node client's) must
 * authenticate and decrypt it, across payload sizes that end inside and on AES block boundaries and a rollover.
 */
function sessions(profile: number, saltLength: number): { sender: SrtpSession; receiver: SrtpSession } {
  const a = { key: randomBytes(16), salt: randomBytes(saltLength) };
  const b = { key: randomBytes(16), salt: randomBytes(saltLength) };
  const config = (local: typeof a, remote: typeof a) => ({
    keys: {
      localMasterKey: local.key,
      localMasterSalt: local.salt,
      remoteMasterKey: remote.key,
      remoteMasterSalt: remote.salt,
    },
    profile: profile as 1,
  });
  return { sender: new SrtpSession(config(a, b)), receiver: new SrtpSession(config(b, a)) };
}

for (const [name, profile, saltLength] of [
  ['AES-128-CM + HMAC-SHA1-80', SRTP_AES128_CM_HMAC_SHA1_80, 14],
  ['AEAD AES-128-GCM', SRTP_AEAD_AES_128_GCM, 12],
] as const)
  describe(`SRTP protection, ${name}`, () => {
    it('matches werift byte for byte and decrypts on the receiving side', () => {
      const { sender, receiver } = sessions(profile, saltLength);
      const protector = SrtpProtector.for(sender.localContext);
      assert.ok(protector);
      assert.equal(protector.tagLength, profile === SRTP_AEAD_AES_128_GCM ? 16 : 10);
      for (const [size, sequenceNumber, roc] of [
        [0, 1, 0],
        [1, 2, 0],
        [15, 3, 0],
        [16, 4, 0],
        [17, 65535, 0],
        [160, 0, 1],
        [1200, 7, 3],
      ] as const) {
        const header = new RtpHeader({
          payloadType: 111,
          sequenceNumber,
          timestamp: 0xfedcba98,
          ssrc: 0x89abcdef,
          marker: size === 1,
          extensions: [
            { id: 1, payload: Buffer.from('3') },
            { id: 2, payload: Buffer.from([0x9e]) },
          ],
        });
        const payload = randomBytes(size);
        const headerBytes = header.serialize(header.serializeSize);
        const out = Buffer.alloc(headerBytes.length + size + protector.tagLength);
        headerBytes.copy(out);
        protector.protect(out, headerBytes.length, payload, header.ssrc, sequenceNumber, roc);
        const expected = sender.localContext.cipher.encryptRtp(header, payload, roc);
        assert.deepEqual(out, expected, `size ${size}, seq ${sequenceNumber}, roc ${roc}`);
        const [decrypted] = receiver.remoteContext.cipher.decryptRtp(out, roc);
        const packet = RtpPacket.deSerialize(decrypted);
        assert.deepEqual(packet.payload, payload);
        assert.equal(packet.header.sequenceNumber, sequenceNumber);
        assert.equal(packet.header.ssrc, 0x89abcdef);
      }
    });

    it('is refused by the receiver when a byte is changed', () => {
      const { sender, receiver } = sessions(profile, saltLength);
      const protector = SrtpProtector.for(sender.localContext);
      assert.ok(protector);
      const header = new RtpHeader({ payloadType: 111, sequenceNumber: 9, timestamp: 1, ssrc: 5 });
      const headerBytes = header.serialize(header.serializeSize);
      const payload = randomBytes(80);
      const out = Buffer.alloc(headerBytes.length + payload.length + protector.tagLength);
      headerBytes.copy(out);
      protector.protect(out, headerBytes.length, payload, 5, 9, 0);
      out[headerBytes.length + 3] = (out[headerBytes.length + 3] ?? 0) ^ 1;
      assert.throws(() => receiver.decrypt(out), { name: 'SrtpAuthenticationError' });
    });
  });

describe('SRTP protection, other profiles', () => {
  it('declines a profile it does not implement (werift then sends)', () => {
    const { sender } = sessions(SRTP_AES128_CM_HMAC_SHA1_80, 14);
    assert.equal(SrtpProtector.for({ ...sender.localContext, profile: 2 }), undefined);
  });
});
