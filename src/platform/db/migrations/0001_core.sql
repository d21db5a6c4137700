-- Accounts, sessions and every credential the Authorization parser resolves.
-- Ids are snowflakes (bigint); every random token is stored only as its SHA-256 digest (base64url).

CREATE TABLE users (
  id bigint PRIMARY KEY,
  username text NOT NULL,
  global_name text,
  email text,
  email_verified boolean NOT NULL DEFAULT false,
  password_hash text,
  password_last_changed_at timestamptz,
  avatar text,
  banner text,
  bio text,
  pronouns text,
  accent_color integer,
  avatar_color integer,
  locale text NOT NULL DEFAULT 'en-US',
  flags bigint NOT NULL DEFAULT 0,
  suspicious_activity_flags integer NOT NULL DEFAULT 0,
  pending_manual_verification boolean NOT NULL DEFAULT false,
  acls text[] NOT NULL DEFAULT '{}',
  is_bot boolean NOT NULL DEFAULT false,
  is_system boolean NOT NULL DEFAULT false,
  date_of_birth date,
  temp_banned_until timestamptz,
  pending_deletion_at timestamptz,
  deletion_reason_code integer,
  last_active_at timestamptz,
  last_active_ip text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE email IS NOT NULL;
CREATE INDEX users_username_idx ON users (lower(username));

CREATE TABLE sessions (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  client_info jsonb NOT NULL DEFAULT '{}',
  ip text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- Addresses (keyed exact for IPv4, /64 for IPv6) from which an account has logged in.
CREATE TABLE authorized_ips (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  ip_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, ip_key)
);

-- Single-use emailed and ticket tokens (verify, reset, revert, IP authorisation, MFA tickets, …).
CREATE TABLE one_time_tokens (
  token_hash text PRIMARY KEY,
  purpose text NOT NULL,
  user_id bigint REFERENCES users (id) ON DELETE CASCADE,
  data jsonb NOT NULL DEFAULT '{}',
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX one_time_tokens_user_idx ON one_time_tokens (user_id, purpose);

CREATE TABLE instance_config (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE applications (
  id bigint PRIMARY KEY,
  owner_id bigint REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  icon text,
  description text,
  redirect_uris text[] NOT NULL DEFAULT '{}',
  bot_public boolean NOT NULL DEFAULT true,
  bot_require_code_grant boolean NOT NULL DEFAULT false,
  client_secret_hash text NOT NULL,
  bot_user_id bigint REFERENCES users (id) ON DELETE SET NULL,
  bot_token_hash text UNIQUE,
  is_admin_builtin boolean NOT NULL DEFAULT false,
  flags integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX applications_owner_idx ON applications (owner_id);

-- One grant per (user, application); access and refresh tokens hang off it so a reused
-- refresh token can revoke the whole grant.
CREATE TABLE oauth2_grants (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  application_id bigint NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, application_id)
);

CREATE TABLE oauth2_tokens (
  token_hash text PRIMARY KEY,
  grant_id bigint NOT NULL REFERENCES oauth2_grants (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  scopes text[] NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth2_tokens_grant_idx ON oauth2_tokens (grant_id);

CREATE TABLE admin_api_keys (
  key_id bigint PRIMARY KEY,
  owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  secret_hash text NOT NULL,
  name text NOT NULL,
  acls text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX admin_api_keys_owner_idx ON admin_api_keys (owner_id);
