import type { Transporter } from 'nodemailer';

export type EmailType =
  | 'email_verification'
  | 'password_reset'
  | 'ip_authorization'
  | 'email_change_original'
  | 'email_change_new'
  | 'email_change_revert'
  | 'harvest_ready';

export interface Email {
  to: string;
  subject: string;
  type: EmailType;
  text: string;
  html: string;
  /** Machine-readable parts (the link token or code) that the test harness exposes. */
  metadata: Record<string, unknown>;
}

export interface Mailer {
  /** True when email can actually leave the server (SMTP configured) or is captured (test mode). */
  readonly enabled: boolean;
  send(email: Email): Promise<void>;
}

export interface CapturedEmail extends Email {
  timestamp: string;
}

/** Keeps every email in memory for the test harness; only built in test mode. */
export class Outbox {
  private readonly emails: CapturedEmail[] = [];

  capture(email: Email, now: number): void {
    this.emails.push({ ...email, timestamp: new Date(now).toISOString() });
    if (this.emails.length > 10_000) this.emails.shift();
  }

  list(recipient?: string): CapturedEmail[] {
    const wanted = recipient?.toLowerCase();
    return wanted ? this.emails.filter((e) => e.to.toLowerCase() === wanted) : [...this.emails];
  }

  clear(): void {
    this.emails.length = 0;
  }
}

export class SmtpMailer implements Mailer {
  readonly enabled = true;
  private opened: Promise<Transporter> | undefined;

  constructor(
    private readonly smtpUrl: string,
    private readonly from: string,
  ) {}

  /** nodemailer is loaded at the first email, not at start (docs/performance.md#start-up). */
  private transport(): Promise<Transporter> {
    this.opened ??= import('nodemailer').then((module) => module.default.createTransport(this.smtpUrl));
    return this.opened;
  }

  /** Checks the connection (and login) without sending anything. */
  async verify(): Promise<void> {
    await (await this.transport()).verify();
  }

  async send(email: Email): Promise<void> {
    await (await this.transport()).sendMail({
      from: this.from,
      to: email.to,
      subject: email.subject,
      text: email.text,
      html: email.html,
    });
  }
}

/** Test mode: capture, and also deliver when SMTP is configured. */
export class CapturingMailer implements Mailer {
  readonly enabled = true;

  constructor(
    private readonly outbox: Outbox,
    private readonly now: () => number,
    private readonly next?: SmtpMailer,
  ) {}

  async send(email: Email): Promise<void> {
    this.outbox.capture(email, this.now());
    await this.next?.send(email);
  }

  async verify(): Promise<void> {
    await this.next?.verify();
  }
}

export class DisabledMailer implements Mailer {
  readonly enabled = false;
  async send(): Promise<void> {}
}
