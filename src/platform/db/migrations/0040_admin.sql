-- Admin API: the audit log of every Admin write and the durable (manual) IP bans.
-- Automatic bans live in shared state (in-process or Redis), not here.

CREATE TABLE audit_logs (
  log_id bigint PRIMARY KEY,
  admin_user_id bigint NOT NULL,
  credential_kind text NOT NULL CHECK (credential_kind IN ('session', 'bearer', 'admin_api_key')),
  api_key_id bigint,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  audit_log_reason text CHECK (char_length(audit_log_reason) <= 512),
  metadata jsonb NOT NULL DEFAULT '{}',
  before jsonb,
  after jsonb,
  created_at timestamptz NOT NULL
);
-- The actor is kept even after the account goes away: an audit trail must outlive what it describes.
CREATE INDEX audit_logs_admin_idx ON audit_logs (admin_user_id, log_id DESC);
CREATE INDEX audit_logs_target_idx ON audit_logs (target_type, target_id, log_id DESC);
CREATE INDEX audit_logs_action_idx ON audit_logs (action, log_id DESC);

-- `ip` is the canonical text of an address or a CIDR range (host bits cleared).
CREATE TABLE ip_bans (
  ip text PRIMARY KEY,
  expires_at timestamptz,
  created_by bigint,
  created_at timestamptz NOT NULL
);
