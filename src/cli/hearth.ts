import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.ts';
import { passwordField, usernameField } from '../domains/auth/account-rules.ts';
import { adminCreate, formatReport } from './admin-create.ts';

const USAGE = `Usage: hearth admin create --email <email> [--password <password>] [--username <name>]
                         [--key-name <name>] [--json] [server options such as --data-dir, --database-url]

Creates the first administrator (or promotes an existing account with that email) with the wildcard ACL.
--key-name also mints an Admin API key with ACL * (printed once). Running it again changes nothing.
Storage is chosen like the server does: DATABASE_URL, else the embedded database in HEARTH_DATA_DIR.
`;

class UsageError extends Error {}

/** Our own options; anything else is a server option (`--data-dir`, `--database-url`, …) handed to loadConfig. */
const OWN_OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  username: { type: 'string' },
  'key-name': { type: 'string' },
  json: { type: 'boolean' },
} as const;

interface AdminCreateArgs {
  email: string;
  password?: string;
  username?: string;
  keyName?: string;
  json: boolean;
  serverArgs: string[];
}

function parseAdminCreate(args: readonly string[]): AdminCreateArgs {
  // Not strict: server options are unknown here and pass through, in order, exactly as written.
  const { values, tokens } = parseArgs({
    args: [...args],
    options: OWN_OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const serverArgs: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option' && token.name in OWN_OPTIONS) {
      if (OWN_OPTIONS[token.name as keyof typeof OWN_OPTIONS].type === 'string' && token.value === undefined)
        throw new UsageError(`--${token.name} needs a value`);
      continue;
    }
    if (token.kind === 'option') serverArgs.push(args[token.index] as string);
    else if (token.kind === 'positional') serverArgs.push(token.value);
    else serverArgs.push('--');
  }
  const own = new Map<string, string>();
  for (const name of ['email', 'password', 'username', 'key-name'] as const) {
    const value = values[name];
    if (typeof value === 'string') own.set(`--${name}`, value);
  }
  const json = values.json === true;
  const email = own.get('--email');
  if (!email || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
    throw new UsageError('--email: a valid email address is required');
  const password = own.get('--password');
  if (password !== undefined && !passwordField.safeParse(password).success)
    throw new UsageError('--password: must be 8–256 characters');
  const username = own.get('--username');
  if (username !== undefined && !usernameField.safeParse(username).success)
    throw new UsageError('--username: 1–32 letters, digits or underscores');
  const keyName = own.get('--key-name');
  if (keyName !== undefined && (keyName.trim().length === 0 || keyName.length > 100))
    throw new UsageError('--key-name: must be 1–100 characters');
  return {
    email,
    json,
    serverArgs,
    ...(password !== undefined ? { password } : {}),
    ...(username !== undefined ? { username } : {}),
    ...(keyName !== undefined ? { keyName: keyName.trim() } : {}),
  };
}

/** The `hearth` command-line entrypoint: like `src/main.ts`, it may read the environment. */
async function main(argv: readonly string[]): Promise<number> {
  const [area, command, ...rest] = argv;
  if (area === undefined || area === '--help' || area === '-h') {
    process.stdout.write(USAGE);
    return area === undefined ? 2 : 0;
  }
  if (area !== 'admin' || command !== 'create') throw new UsageError(`unknown command "${argv.join(' ')}"`);
  const args = parseAdminCreate(rest);
  const config = loadConfig(process.env, args.serverArgs);
  const report = await adminCreate(config, args);
  process.stdout.write(args.json ? `${JSON.stringify(report)}\n` : formatReport(report));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      process.stderr.write(`hearth: ${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    process.stderr.write(`hearth: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
