-- OpenID Connect provider (docs/oauth2.md, "OpenID Connect").
--
-- ID-token signing keys. The newest row signs; a new key is made once the newest is older than the rotation
-- period, and an older key stays published in the JWKS until the ID tokens it signed have expired. The
-- private key is a JWK sealed with AES-256-GCM under a key derived from the server's MFA secret (like TOTP
-- and SSO client secrets), bound to its `kid`; only the public JWK is stored in clear.
CREATE TABLE oidc_signing_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  public_jwk jsonb NOT NULL,
  private_jwk_sealed text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX oidc_signing_keys_created_idx ON oidc_signing_keys (created_at);

-- What an authorization request carries into the ID token: the relying party's nonce and the time the user
-- authenticated (the session's sign-in).
ALTER TABLE oauth2_codes ADD COLUMN nonce text;
ALTER TABLE oauth2_codes ADD COLUMN auth_time timestamptz;
-- A refresh with `openid` returns a new ID token whose auth_time is still the original sign-in.
ALTER TABLE oauth2_tokens ADD COLUMN auth_time timestamptz;
