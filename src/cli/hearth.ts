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

const OWN_OPTIONS = new Set(['--email', '--password', '--username', '--key-name']);

interface AdminCreateArgs {
  email: string;
  password?: string;
  username?: string;
  keyName?: string;
  json: boolean;
  serverArgs: string[];
}

function parseAdminCreate(args: readonly string[]): AdminCreateArgs {
  const own = new Map<string, string>();
  const serverArgs: string[] = [];
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (flag === '--json') {
      json = true;
    } else if (OWN_OPTIONS.has(flag)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      own.set(flag, value);
    } else {
      serverArgs.push(arg);
    }
  }
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
