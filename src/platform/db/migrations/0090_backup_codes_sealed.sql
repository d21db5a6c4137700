-- Backup codes: the digest becomes keyed (HMAC under a key derived from the MFA secret, `k1.` prefix) and a
-- copy sealed under another derived key lets the owner see the current set again (docs/mfa-and-sudo.md).
-- Rows from before keep their unkeyed digest and no sealed copy; they still work until replaced.
ALTER TABLE mfa_backup_codes ADD COLUMN code_sealed text;
