import type { Email, Mailer } from './mailer.ts';

/** How email delivery is going on this process: `disabled` when no SMTP is configured. */
export type DeliveryStatus = 'ok' | 'failing' | 'disabled';

export interface DeliveryReport {
  status: DeliveryStatus;
  /** When the current run of failures began (ISO 8601), or null. */
  failing_since: string | null;
  /** The last failure's reason, for administrators: credentials in a URL are removed. */
  last_error: string | null;
  /** Deliveries that failed since the last one that went through. */
  failed_deliveries: number;
}

/** A mailer that can check its connection without sending anything (SMTP's `verify`). */
export interface VerifiableMailer extends Mailer {
  verify?(): Promise<unknown>;
}

/** While failing, the connection is checked again at most this often, so delivery recovers without an email. */
const RECHECK_MS = 30_000;
const MAX_ERROR_LENGTH = 200;

/**
 * Remembers whether email is going out (docs/deployment.md#email-delivery): every delivery goes through it, a
 * failure marks delivery as failing until one goes through (or the connection checks out again). People are
 * told in the web client and administrators in the Admin API, instead of "check your email" when nothing left.
 * The state is the process's own: each node learns from its own deliveries.
 */
export class MailDeliveryHealth implements Mailer {
  private failure: { since: number; error: string; count: number } | null = null;
  private lastCheck = 0;
  private checking = false;

  constructor(
    private readonly inner: VerifiableMailer,
    private readonly now: () => number,
  ) {}

  get enabled(): boolean {
    return this.inner.enabled;
  }

  async send(email: Email): Promise<void> {
    try {
      await this.inner.send(email);
      this.failure = null;
    } catch (error) {
      const reason = describe(error);
      this.failure = this.failure
        ? { ...this.failure, error: reason, count: this.failure.count + 1 }
        : { since: this.now(), error: reason, count: 1 };
      throw error;
    }
  }

  status(): DeliveryStatus {
    if (!this.failure) return this.inner.enabled ? 'ok' : 'disabled';
    this.recheck();
    return 'failing';
  }

  report(): DeliveryReport {
    const status = this.status();
    const failure = this.failure;
    return {
      status,
      failing_since: failure ? new Date(failure.since).toISOString() : null,
      last_error: failure?.error ?? null,
      failed_deliveries: failure?.count ?? 0,
    };
  }

  /** In the background: a connection that checks out again ends the failing state. */
  private recheck(): void {
    const verify = this.inner.verify?.bind(this.inner);
    if (!verify || this.checking || this.now() - this.lastCheck < RECHECK_MS) return;
    this.checking = true;
    this.lastCheck = this.now();
    verify()
      .then(() => {
        this.failure = null;
      })
      .catch(() => {})
      .finally(() => {
        this.checking = false;
      });
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\/\/[^/@\s]+@/g, '//').slice(0, MAX_ERROR_LENGTH);
}
