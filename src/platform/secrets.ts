import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBase64Url } from './crypto/tokens.ts';

export type SecretName = 'sudo' | 'mediaProxy' | 'relay' | 'mfa';

/**
 * Development default for signing secrets: generated once into `<dataDir>/secrets.json` (mode 0600) so they
 * survive restarts. Returns which names had to be generated so the caller can warn about each.
 */
export async function loadOrCreateSecrets(
  dataDir: string,
  given: Partial<Record<SecretName, string | undefined>>,
): Promise<{ secrets: Record<SecretName, string>; generated: SecretName[] }> {
  const names: SecretName[] = ['sudo', 'mediaProxy', 'relay', 'mfa'];
  const missing = names.filter((name) => !given[name]);
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
  const secrets = Object.fromEntries(names.map((name) => [name, given[name] ?? stored[name]])) as Record<
    SecretName,
    string
  >;
  return { secrets, generated: missing };
}
