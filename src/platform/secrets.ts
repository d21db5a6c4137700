import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBase64Url } from './crypto/tokens.ts';

export const SECRET_NAMES = ['sudo', 'mediaProxy', 'relay', 'mfa'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Record<SecretName, string>;

/**
 * Development default for signing secrets: generated once into `<dataDir>/secrets.json` (mode 0600) so they
 * survive restarts. Returns which names had to be generated so the caller can warn about each.
 */
export async function loadOrCreateSecrets(
  dataDir: string,
  given: Partial<Record<SecretName, string | undefined>>,
): Promise<{ secrets: Secrets; generated: SecretName[] }> {
  const missing = SECRET_NAMES.filter((name) => !given[name]);
  const path = join(dataDir, 'secrets.json');
  let stored: Partial<Record<SecretName, string>> = {};
  if (missing.length > 0) {
    try {
      stored = JSON.parse(await readFile(path, 'utf8'));
    } catch {
      stored = {};
    }
  }
  const generated: SecretName[] = [];
  for (const name of missing) {
    if (!stored[name]) {
      stored[name] = randomBase64Url(32);
      generated.push(name);
    }
  }
  if (generated.length > 0) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(path, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  const secrets = Object.fromEntries(SECRET_NAMES.map((name) => [name, given[name] ?? stored[name]])) as Secrets;
  return { secrets, generated: missing };
}
