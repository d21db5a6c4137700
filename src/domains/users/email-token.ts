/** Applies an email change finished through the email-change flow; provided by the account-lifecycle module. */
export type EmailTokenApplier = (userId: string, emailToken: string, ctx: { ip: string; now: number }) => Promise<void>;
