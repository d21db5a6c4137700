import type { Config } from '../config/config.ts';
import { issueAdminClientSecretIfUnissued } from '../domains/admin/admin-application.ts';
import { createOrPromoteFirstAdmin, type FirstAdminInput } from '../domains/admin/first-admin.ts';
import { SnowflakeGenerator } from '../platform/crypto/snowflake.ts';
import { migrate } from '../platform/db/migrate.ts';
import { openConfiguredDatabase } from '../platform/db/open-database.ts';

/**
 * Snowflake worker id of the CLI: distinct from the default server worker (0), so ids minted while a
 * server runs against the same PostgreSQL database cannot collide.
 */
const CLI_WORKER_ID = 1023;

export interface AdminCreateReport {
  user_id: string;
  email: string;
  created: boolean;
  promoted: boolean;
  password?: string;
  api_key?: { key_id: string; name: string; key?: string; existed: boolean };
  admin_oauth2: { application_id: string; client_secret?: string };
}

/** `hearth admin create`: migrates, makes sure the Admin application exists, creates or promotes the admin. */
export async function adminCreate(config: Config, input: FirstAdminInput): Promise<AdminCreateReport> {
  const db = await openConfiguredDatabase(config, 2);
  try {
    await migrate(db);
    const ids = new SnowflakeGenerator(CLI_WORKER_ID);
    const now = Date.now();
    const { applicationId, clientSecret } = await issueAdminClientSecretIfUnissued({ db, ids, config, now });
    const result = await createOrPromoteFirstAdmin({ db, ids, now }, input);
    const report: AdminCreateReport = {
      user_id: result.userId,
      email: input.email,
      created: result.created,
      promoted: result.promoted,
      admin_oauth2: { application_id: applicationId, ...(clientSecret ? { client_secret: clientSecret } : {}) },
    };
    if (result.generatedPassword) report.password = result.generatedPassword;
    if (result.key && input.keyName !== undefined) {
      report.api_key = {
        key_id: result.key.keyId,
        name: input.keyName,
        existed: result.key.existed,
        ...(result.key.key ? { key: result.key.key } : {}),
      };
    }
    return report;
  } finally {
    await db.close();
  }
}

/** Human-readable lines; every secret appears exactly once and is labelled as such. */
export function formatReport(report: AdminCreateReport): string {
  const lines: string[] = [];
  if (report.created) lines.push(`Created administrator ${report.email} (user ${report.user_id}) with ACL *.`);
  else if (report.promoted) lines.push(`Promoted ${report.email} (user ${report.user_id}) to ACL *.`);
  else lines.push(`${report.email} (user ${report.user_id}) is already an administrator with ACL *; nothing changed.`);
  if (report.password) lines.push(`Generated password (shown once, change it after signing in): ${report.password}`);
  if (report.api_key?.key) {
    lines.push(`Admin API key "${report.api_key.name}" (id ${report.api_key.key_id}), shown once:`);
    lines.push(`  ${report.api_key.key}`);
    lines.push('  Send it as: Authorization: Admin <key>');
  } else if (report.api_key) {
    lines.push(
      `Admin API key "${report.api_key.name}" already exists (id ${report.api_key.key_id}); its secret was shown when it was minted. Revoke it to mint a new one.`,
    );
  }
  if (report.admin_oauth2.client_secret) {
    lines.push(`Admin OAuth2 application ${report.admin_oauth2.application_id}: generated client secret (shown once):`);
    lines.push(`  ${report.admin_oauth2.client_secret}`);
  }
  return `${lines.join('\n')}\n`;
}
