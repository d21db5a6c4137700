/**
 * Secrets minted when an application is created, handed from the portal's list page to the application's
 * page in memory only (never stored), so that page can show them once.
 */
const minted = new Map<string, { clientSecret?: string; botToken?: string }>();

export function handOver(applicationId: string, secrets: { clientSecret?: string; botToken?: string }): void {
  minted.set(applicationId, secrets);
}

/** The secrets handed over for this application (until `forget`). */
export function peek(applicationId: string): { clientSecret?: string; botToken?: string } {
  return minted.get(applicationId) ?? {};
}

/** Called once the page has shown them: reopening the page later shows them no more. */
export function forget(applicationId: string): void {
  minted.delete(applicationId);
}
