import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { deriveKey, openWithKey, sealWithKey } from '../../platform/crypto/sealed-box.ts';
import type { Queryable } from '../../platform/db/database.ts';

/** HKDF `info` of the key that seals applications' Ed25519 private keys: nothing else is sealed under it. */
const KEY_INFO = 'hearth application interactions key v1';
const SEALED_PREFIX = 'v1.';
/** Private keys opened recently, by their sealed form (a replaced key is a new entry). */
const CACHE_LIMIT = 1000;

export interface ApplicationKeyPair {
  /** Hex of the raw 32-byte Ed25519 public key, as Discord shows it. */
  verifyKey: string;
  /** The PKCS #8 private key, sealed and bound to the application id. */
  sealedPrivateKey: string;
}

/**
 * Each application's Ed25519 key pair (docs/bots.md): requests to its interactions endpoint are signed with
 * the private key, and the application checks them against `verify_key`. The private key is stored sealed
 * under a key derived from the server's MFA secret, bound to the application id, so a database copy alone
 * signs nothing and a sealed key copied onto another application does not open. Applications created before
 * keys existed get their pair the first time it is needed (`verifyKey`, `signer`).
 */
export class InteractionKeys {
  private readonly key: Buffer;
  private readonly opened = new Map<string, { verifyKey: string; privateKey: KeyObject }>();

  constructor(
    private readonly db: Queryable,
    serverSecret: string,
  ) {
    this.key = deriveKey(serverSecret, KEY_INFO);
  }

  /** A fresh pair for `applicationId` (stored by the caller, or by `ensure`). */
  newPair(applicationId: string): ApplicationKeyPair {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const verifyKey = publicHex(publicKey);
    const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url');
    return { verifyKey, sealedPrivateKey: SEALED_PREFIX + sealWithKey(this.key, pkcs8, context(applicationId)) };
  }

  /**
   * The application's `verify_key`, made now when it has none yet (or its private key no longer opens).
   * One indexed read; opened keys are cached by their sealed form, so they are decrypted once per process.
   */
  async verifyKey(applicationId: string): Promise<string> {
    return (await this.ensure(applicationId)).verifyKey;
  }

  /** Signs `timestamp + body` as Discord does: the hex Ed25519 signature, and the key that checks it. */
  async sign(
    applicationId: string,
    timestamp: string,
    body: string,
  ): Promise<{ signature: string; verifyKey: string }> {
    const pair = await this.ensure(applicationId);
    const signature = sign(null, Buffer.from(timestamp + body, 'utf8'), pair.privateKey).toString('hex');
    return { signature, verifyKey: pair.verifyKey };
  }

  /**
   * The stored pair, opened. A missing pair is made and stored with a conditional UPDATE, so two processes
   * racing on an old application end up with one pair (the loser reads the winner's). A stored key that no
   * longer opens (the MFA secret changed) is replaced the same way, and the endpoint URL, verified against
   * the old key, is cleared: interactions go back to the gateway until the application sets it again.
   */
  private async ensure(applicationId: string): Promise<{ verifyKey: string; privateKey: KeyObject }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const [row] = await this.db.query<{ verify_key: string | null; interactions_private_key: string | null }>(
        'SELECT verify_key, interactions_private_key FROM applications WHERE id = $1',
        [applicationId],
      );
      if (!row) throw new Error('unknown application');
      const sealed = row.interactions_private_key;
      const cacheKey = `${applicationId}:${sealed}`;
      const cached = sealed && row.verify_key ? this.opened.get(cacheKey) : undefined;
      if (cached?.verifyKey === row.verify_key) return cached;
      const pkcs8 =
        sealed?.startsWith(SEALED_PREFIX) && row.verify_key
          ? openWithKey(this.key, sealed.slice(SEALED_PREFIX.length), context(applicationId))
          : undefined;
      const privateKey = pkcs8
        ? createPrivateKey({ key: Buffer.from(pkcs8, 'base64url'), format: 'der', type: 'pkcs8' })
        : undefined;
      // The shown key must be the private key's own half, or every signature would fail verification.
      if (sealed && privateKey && row.verify_key === publicHex(createPublicKey(privateKey))) {
        const pair = { verifyKey: row.verify_key, privateKey };
        if (this.opened.size >= CACHE_LIMIT) this.opened.clear();
        this.opened.set(cacheKey, pair);
        return pair;
      }
      const fresh = this.newPair(applicationId);
      await this.db.query(
        `UPDATE applications SET verify_key = $3, interactions_private_key = $4,
                interactions_endpoint_url = CASE WHEN $2::text IS NULL THEN interactions_endpoint_url END
          WHERE id = $1 AND interactions_private_key IS NOT DISTINCT FROM $2`,
        [applicationId, sealed, fresh.verifyKey, fresh.sealedPrivateKey],
      );
    }
    throw new Error('could not store the application’s interactions key');
  }
}

/** Hex of the raw 32-byte Ed25519 public key (JWK `x`). */
function publicHex(publicKey: KeyObject): string {
  return Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('hex');
}

function context(applicationId: string): string {
  return `application_interactions_key:${applicationId}`;
}
