import type { Database, Queryable } from '../../platform/db/database.ts';
import { type Cidr, cidrContains, cidrText, parseCidr } from '../../platform/net/cidr.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { IpBan } from '../../platform/state/ip-bans.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'admin.ip_bans.changed': Record<string, never>;
  }
}

const CHANGED_TOPIC = 'admin.ip_bans.changed';

interface LoadedBan {
  range: Cidr;
  expiresAt: number | null;
}

/**
 * Manual IP bans (docs/conventions.md#ip-bans): durable in `ip_bans`, checked on every request from memory. Each process
 * loads them at start and reloads when any process publishes a change, so a ban applies everywhere at once.
 */
export class ManualIpBans {
  private bans: LoadedBan[] = [];

  constructor(
    private readonly db: Database,
    private readonly bus: EventBus,
  ) {
    bus.subscribe(CHANGED_TOPIC, () => {
      this.reload().catch(() => {});
    });
    // A change announced while this process was not listening (a Redis reconnect) is read now.
    bus.onGap(CHANGED_TOPIC, () => {
      this.reload().catch(() => {});
    });
  }

  async reload(): Promise<void> {
    const rows = await this.db.query<{ ip: string; expires_at: Date | null }>('SELECT ip, expires_at FROM ip_bans');
    this.bans = rows.map((row) => ({ range: parseCidr(row.ip), expiresAt: row.expires_at?.getTime() ?? null }));
  }

  /** The ban covering an address, if any; expired bans are ignored (and pruned on the next change). */
  find(address: string, now: number): IpBan | undefined {
    for (const ban of this.bans) {
      if (ban.expiresAt !== null && ban.expiresAt <= now) continue;
      if (cidrContains(ban.range, address)) return { ip: ban.range.text, kind: 'manual', expiresAt: ban.expiresAt };
    }
    return undefined;
  }

  /** The ban stored under exactly this address or range. */
  findExact(ip: string, now: number): IpBan | undefined {
    const ban = this.bans.find((b) => b.range.text === ip && (b.expiresAt === null || b.expiresAt > now));
    return ban ? { ip, kind: 'manual', expiresAt: ban.expiresAt } : undefined;
  }

  list(now: number): IpBan[] {
    return this.bans
      .filter((ban) => ban.expiresAt === null || ban.expiresAt > now)
      .map((ban) => ({ ip: ban.range.text, kind: 'manual' as const, expiresAt: ban.expiresAt }));
  }

  /** Adds or replaces a ban inside the caller's transaction; call `changed()` after it commits. */
  async put(tx: Queryable, ip: string, expiresAt: number | null, createdBy: string, now: number): Promise<void> {
    await tx.query('DELETE FROM ip_bans WHERE expires_at IS NOT NULL AND expires_at <= $1', [new Date(now)]);
    await tx.query(
      `INSERT INTO ip_bans (ip, expires_at, created_by, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (ip) DO UPDATE SET expires_at = EXCLUDED.expires_at, created_by = EXCLUDED.created_by,
                                      created_at = EXCLUDED.created_at`,
      [ip, expiresAt === null ? null : new Date(expiresAt), createdBy, new Date(now)],
    );
  }

  /** Removes the ban stored under exactly this text; true when there was one. */
  async delete(tx: Queryable, ip: string): Promise<boolean> {
    const rows = await tx.query('DELETE FROM ip_bans WHERE ip = $1 RETURNING ip', [ip]);
    return rows.length > 0;
  }

  /** Call after a transaction changed `ip_bans`. */
  async changed(): Promise<void> {
    await this.reload();
    await this.bus.publish(CHANGED_TOPIC, {});
  }
}

/**
 * Canonical text of an address or CIDR range: host bits cleared, and a full-length prefix written as the
 * bare address, so `10.0.0.7/8` and `10.0.0.0/8` name one ban. Undefined when the text is neither.
 */
export function canonicalIpOrCidr(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/.test(trimmed)) return undefined;
  try {
    return cidrText(parseCidr(trimmed));
  } catch {
    return undefined;
  }
}
