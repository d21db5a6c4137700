import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/log.ts';
import type { Email, EmailType, Mailer } from '../../platform/mail/mailer.ts';

interface Template {
  subject: string;
  intro: string;
  action: string;
  /** Path of the web-app page that consumes the token, or undefined when the email carries a code. */
  path?: string;
  expires: string;
}

const TEMPLATES: Record<EmailType, Template> = {
  email_verification: {
    subject: 'Verify your email address',
    intro: 'Confirm that this address belongs to you.',
    action: 'Verify email',
    path: '/verify',
    expires: '24 hours',
  },
  password_reset: {
    subject: 'Reset your password',
    intro: 'Someone asked to reset the password of your account. If it was not you, ignore this email.',
    action: 'Reset password',
    path: '/reset',
    expires: '1 hour',
  },
  ip_authorization: {
    subject: 'New login location detected',
    intro: 'A login to your account came from a new location. Approve it if it was you.',
    action: 'Approve login',
    path: '/authorize-ip',
    expires: '15 minutes',
  },
  email_change_original: {
    subject: 'Confirm your email change',
    intro: 'Use this code to confirm that you want to change the email address of your account.',
    action: 'Code',
    expires: '10 minutes',
  },
  email_change_new: {
    subject: 'Confirm your new email address',
    intro: 'Use this code to confirm your new email address.',
    action: 'Code',
    expires: '10 minutes',
  },
  email_change_revert: {
    subject: 'Your email address was changed',
    intro:
      'The email address of your account was changed. If it was not you, revert the change and secure your account.',
    action: 'Revert change',
    path: '/auth/email-revert',
    expires: '24 hours',
  },
  harvest_ready: {
    subject: 'Your data is ready to download',
    intro:
      'The archive of your account data that you asked for is ready. The link works once: keep the file somewhere safe. If you did not ask for it, secure your account.',
    action: 'Download your data',
    expires: '7 days',
  },
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Builds and sends account emails: plain text and HTML, links from the configured web-app URL.
 * A failed delivery is logged (without the link) and never fails the request that caused it.
 */
export class AccountEmails {
  constructor(
    private readonly mailer: Mailer,
    private readonly webappUrl: string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  get enabled(): boolean {
    return this.mailer.enabled;
  }

  /** `details`: lines that say what caused the email (the address and device of a new sign-in). */
  async sendLink(
    type: EmailType,
    to: string,
    token: string,
    extra: Record<string, unknown> = {},
    details: readonly string[] = [],
  ): Promise<void> {
    const template = TEMPLATES[type];
    const link = `${this.webappUrl}${template.path ?? ''}#token=${encodeURIComponent(token)}`;
    const detailText = details.length > 0 ? `${details.join('\n')}\n\n` : '';
    const detailHtml = details.length > 0 ? `<p>${details.map(escapeHtml).join('<br>')}</p>` : '';
    await this.deliver({
      to,
      type,
      subject: template.subject,
      text: `${template.intro}\n\n${detailText}${template.action}: ${link}\n\nThis link expires in ${template.expires}.\n`,
      html: `<p>${escapeHtml(template.intro)}</p>${detailHtml}<p><a href="${escapeHtml(link)}">${escapeHtml(template.action)}</a></p><p>This link expires in ${template.expires}.</p>`,
      metadata: { token, ...extra },
    });
  }

  /**
   * The data-export email: its link is the signed, one-time download URL on the API itself (a click
   * downloads the archive; no web-app page is involved).
   */
  async sendHarvestReady(to: string, url: string, extra: Record<string, unknown> = {}): Promise<void> {
    const template = TEMPLATES.harvest_ready;
    await this.deliver({
      to,
      type: 'harvest_ready',
      subject: template.subject,
      text: `${template.intro}\n\n${template.action}: ${url}\n\nThis link expires in ${template.expires}.\n`,
      html: `<p>${escapeHtml(template.intro)}</p><p><a href="${escapeHtml(url)}">${escapeHtml(template.action)}</a></p><p>This link expires in ${template.expires}.</p>`,
      metadata: extra,
    });
  }

  async sendCode(type: EmailType, to: string, code: string, extra: Record<string, unknown> = {}): Promise<void> {
    const template = TEMPLATES[type];
    await this.deliver({
      to,
      type,
      subject: template.subject,
      text: `${template.intro}\n\nCode: ${code}\n\nThis code expires in ${template.expires}.\n`,
      html: `<p>${escapeHtml(template.intro)}</p><p>Code: <strong>${escapeHtml(code)}</strong></p><p>This code expires in ${template.expires}.</p>`,
      metadata: { code, ...extra },
    });
  }

  private async deliver(email: Email): Promise<void> {
    try {
      await this.mailer.send(email);
    } catch (error) {
      this.log.warn('email delivery failed', {
        type: email.type,
        at: this.clock.now(),
        error: (error as Error).message,
      });
    }
  }
}
