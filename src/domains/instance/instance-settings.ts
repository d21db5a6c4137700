import { deriveKey, openWithKey, sealWithKey } from '../../platform/crypto/sealed-box.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'instance.settings.changed': Record<string, never>;
  }
}

export interface SsoSettings {
  enabled: boolean;
  enforced: boolean;
  display_name: string;
  issuer: string | null;
  authorization_url: string | null;
  token_url: string | null;
  userinfo_url: string | null;
  jwks_url: string | null;
  client_id: string | null;
  /**
   * In memory in clear (the provider needs it to authenticate us); at rest sealed (AES-256-GCM under a key
   * derived from the MFA secret, `s1.` prefix). Never returned by reads.
   */
  client_secret: string | null;
  scope: string;
  allowed_domains: string[];
  auto_provision: boolean;
  link_by_email: boolean;
  allow_private_issuer: boolean;
}

export interface InstanceSettingsValue {
  registration: { mode: 'open' | 'approval' | 'closed' };
  sso: SsoSettings;
  admin_oauth2_application_id: string | null;
}

export const DEFAULT_SETTINGS: InstanceSettingsValue = {
  registration: { mode: 'open' },
  sso: {
    enabled: false,
    enforced: false,
    display_name: 'Single sign-on',
    issuer: null,
    authorization_url: null,
    token_url: null,
    userinfo_url: null,
    jwks_url: null,
    client_id: null,
    client_secret: null,
    scope: 'openid email profile',
    allowed_domains: [],
    auto_provision: false,
    link_by_email: false,
    allow_private_issuer: false,
  },
  admin_oauth2_application_id: null,
};

const TOPIC = 'instance.settings.changed';
const SEALED_PREFIX = 's1.';
const SEAL_CONTEXT = 'instance_config:sso.client_secret';

/**
 * Instance-wide settings kept in `instance_config`, read on hot paths (SSO enforcement) from memory and
 * reloaded in every process when any process changes them.
 */
export class InstanceSettings {
  private current: InstanceSettingsValue = structuredClone(DEFAULT_SETTINGS);
  private readonly sealKey: Buffer;

  constructor(
    private readonly db: Database,
    private readonly bus: EventBus,
    /** The server's MFA secret: the SSO client secret is sealed under a key derived from it. */
    secret: string,
  ) {
    this.sealKey = deriveKey(secret, 'hearth sso client secret v1');
    bus.subscribe(TOPIC, () => {
      this.reload().catch(() => {});
    });
    // A change announced while this process was not listening (a Redis reconnect) is read now.
    bus.onGap(TOPIC, () => {
      this.reload().catch(() => {});
    });
  }

  async reload(): Promise<void> {
    const rows = await this.db.query<{ key: string; value: unknown }>('SELECT key, value FROM instance_config');
    const next = structuredClone(DEFAULT_SETTINGS) as unknown as Record<string, unknown>;
    for (const row of rows) {
      const base = next[row.key];
      next[row.key] =
        base && typeof base === 'object' && !Array.isArray(base) && row.value && typeof row.value === 'object'
          ? { ...base, ...(row.value as object) }
          : row.value;
    }
    const value = next as unknown as InstanceSettingsValue;
    value.sso = { ...value.sso, client_secret: this.openSecret(value.sso.client_secret) };
    this.current = value;
  }

  /** A stored secret in clear: sealed ones are opened, plain ones (from before sealing) are taken as they are. */
  private openSecret(stored: string | null): string | null {
    if (stored === null || !stored.startsWith(SEALED_PREFIX)) return stored;
    return openWithKey(this.sealKey, stored.slice(SEALED_PREFIX.length), SEAL_CONTEXT) ?? null;
  }

  private sealSecret(plain: string | null): string | null {
    return plain === null ? null : SEALED_PREFIX + sealWithKey(this.sealKey, plain, SEAL_CONTEXT);
  }

  /** Start-up: a client secret stored in clear by an earlier version is sealed in place. */
  async sealPlainSecret(): Promise<boolean> {
    const [row] = await this.db.query<{ value: { client_secret?: string | null } }>(
      `SELECT value FROM instance_config WHERE key = 'sso'`,
    );
    const stored = row?.value?.client_secret;
    if (typeof stored !== 'string' || stored.startsWith(SEALED_PREFIX)) return false;
    await this.db.query(
      `UPDATE instance_config SET value = jsonb_set(value, '{client_secret}', to_jsonb($1::text))
        WHERE key = 'sso' AND value->>'client_secret' = $2`,
      [this.sealSecret(stored), stored],
    );
    return true;
  }

  get(): InstanceSettingsValue {
    return this.current;
  }

  /** True when SSO is enabled, configured and enforced (docs/sso.md#enforcement). */
  ssoEnforced(): boolean {
    const sso = this.current.sso;
    return sso.enabled && sso.enforced && ssoConfigured(sso);
  }

  /** Stores one setting inside the caller's transaction; call `changed()` once after it commits. */
  async write<K extends keyof InstanceSettingsValue>(
    tx: Queryable,
    key: K,
    value: InstanceSettingsValue[K],
    now: number,
  ): Promise<void> {
    const stored =
      key === 'sso'
        ? { ...(value as SsoSettings), client_secret: this.sealSecret((value as SsoSettings).client_secret) }
        : value;
    await writeInstanceConfig(tx, key, stored, now);
  }

  /** Call after a transaction changed `instance_config`: reloads here and in every other process. */
  async changed(): Promise<void> {
    await this.reload();
    await this.bus.publish(TOPIC, {});
  }

  /** Stores one setting on its own and reloads everywhere. */
  async update<K extends keyof InstanceSettingsValue>(key: K, value: InstanceSettingsValue[K]): Promise<void> {
    await this.write(this.db, key, value, Date.now());
    await this.changed();
  }
}

/** Upserts one `instance_config` row; also used for keys outside the in-memory settings. */
export async function writeInstanceConfig(tx: Queryable, key: string, value: unknown, now: number): Promise<void> {
  await tx.query(
    `INSERT INTO instance_config (key, value, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
    [key, JSON.stringify(value), new Date(now)],
  );
}

export function ssoConfigured(sso: SsoSettings): boolean {
  return Boolean(sso.issuer && sso.client_id);
}
