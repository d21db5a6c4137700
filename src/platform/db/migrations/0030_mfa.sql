-- Second factors: TOTP, backup codes, WebAuthn credentials, and the per-account MFA failure allowance.

-- The TOTP secret has to be readable to compute codes, so it cannot be a digest. `last_step` is the time
-- step of the last accepted code: a code is accepted only for a later step (the replay guard, docs/mfa-and-sudo.md).
CREATE TABLE mfa_totp (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret text NOT NULL,
  last_step bigint,
  enabled_at timestamptz NOT NULL
);

-- Backup codes are stored only as SHA-256 digests of `<user id>:<normalised code>`.
CREATE TABLE mfa_backup_codes (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE webauthn_credentials (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- base64url credential id as the authenticator reports it
  credential_id text NOT NULL UNIQUE,
  public_key bytea NOT NULL,
  sign_count bigint NOT NULL DEFAULT 0,
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX webauthn_credentials_user_idx ON webauthn_credentials (user_id);

-- One row per MFA attempt still inside the 15-minute window; a success deletes its own row again.
CREATE TABLE mfa_attempts (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  attempted_at timestamptz NOT NULL
);
CREATE INDEX mfa_attempts_user_idx ON mfa_attempts (user_id, attempted_at);
