// `npm run admin -- <command>`: the admin API for a person at a terminal. Talks to a running
// service (--url, or PUBLIC_BASE_URL, or http://HOST:PORT as the service listens) with the master
// key (MASTER_KEY, or the key the embedded mode keeps in DATA_DIR) and prints the JSON answer.
import { parseArgs } from 'node:util';
import { backupUsage, runBackupCommand } from './backup';
import {
  callService,
  parseScopes,
  resolveConnection,
  ServiceError,
  UsageError,
  VALID_SCOPES,
  type Connection,
} from './admin/connection';
import { quickstart } from './admin/quickstart';

const usage = `Usage: npm run admin -- <command> [options]

Options of every command:
  --url <url>     the service's URL; default PUBLIC_BASE_URL, or http://HOST:PORT (127.0.0.1:3000)
  --help          this text (also: npm run admin -- help)

Commands:
  quickstart                                                   a tenant ("Quickstart") and an API key with every
                                                               scope, with lines to paste into a shell to try REST,
                                                               GraphQL and the edge; run again: the same tenant,
                                                               another key
  tenant:create --name <name>                                  create a tenant
  tenant:list [--size <n>] [--after <cursor> | --before <cursor>]
                                                               list tenants, oldest first (cursors from page.after
                                                               and page.before of the previous answer)
  tenant:get --tenant <tenant id>                              show a tenant
  tenant:rename --tenant <tenant id> --name <name>             rename a tenant
  tenant:delete --tenant <tenant id> --yes                     delete a tenant and everything it owns, for good
  key:create --tenant <tenant id> --scopes <a,b,...> [--name <name>]
                                                               issue an API key (printed once)
  key:list --tenant <tenant id> [--size <n>] [--after <cursor> | --before <cursor>]
                                                               list a tenant's API keys (never their secrets)
  key:get --tenant <tenant id> --key <key id>                  show an API key
  key:rename --tenant <tenant id> --key <key id> --name <name> rename an API key
  key:revoke --tenant <tenant id> --key <key id>               revoke an API key
  client:create --tenant <tenant id> --name <name> --redirect-uris <uri,uri,...> --scopes <a,b,...> [--public]
                                                               register an OAuth client (secret printed once;
                                                               --public: no secret, PKCE required)
  client:list --tenant <tenant id> [--size <n>] [--after <cursor> | --before <cursor>]
                                                               list a tenant's OAuth clients (never their secrets)
  client:get --tenant <tenant id> --client <client id>         show an OAuth client
  client:update --tenant <tenant id> --client <client id> [--name <name>] [--redirect-uris <uri,...>]
                [--scopes <a,b,...>]                           change a client; the lists given replace the old ones
  client:rotate-secret --tenant <tenant id> --client <client id>
                                                               give a confidential client a new secret (printed
                                                               once); the old one stops working at once
  client:delete --tenant <tenant id> --client <client id>      delete an OAuth client and revoke its tokens
  user:create --tenant <tenant id> --email <email> [--password <password>]
                                                               create a user for the OAuth login page; without
                                                               --password the password is read from stdin
  user:list --tenant <tenant id> [--email <email>] [--size <n>] [--after <cursor> | --before <cursor>]
                                                               list a tenant's users, or find one by e-mail
  user:get --tenant <tenant id> --user <user id>               show a user
  user:password --tenant <tenant id> --user <user id> [--password <password>]
                                                               set a user's password (from stdin without
                                                               --password) and sign them out everywhere
  user:delete --tenant <tenant id> --user <user id>            delete a user and revoke their tokens
  keys:rotate                                                  make a new OAuth signing key current; the old ones
                                                               verify until the tokens they signed expire
${backupUsage}

Scopes (comma-separated): ${VALID_SCOPES}; quote * (--scopes '*') so that the shell leaves it alone.
        OAuth clients may also have openid (ID tokens).`;

/** A command line that cannot be sent: exit code 2. */
function fail(message: string): never {
  throw new UsageError(message);
}

const options = {
  url: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  tenant: { type: 'string' },
  scopes: { type: 'string' },
  key: { type: 'string' },
  'redirect-uris': { type: 'string' },
  public: { type: 'boolean' },
  email: { type: 'string' },
  password: { type: 'string' },
  client: { type: 'string' },
  user: { type: 'string' },
  size: { type: 'string' },
  after: { type: 'string' },
  before: { type: 'string' },
  yes: { type: 'boolean' },
} as const;

/**
 * The options of the command line. A parse error is a usage error; when `--scopes` is among the
 * arguments its value is checked first, since an unquoted `*` there becomes file names that
 * would otherwise be reported as stray arguments.
 */
function parseCommandLine(args: string[]) {
  try {
    return parseArgs({ args, options, strict: true }).values;
  } catch (error) {
    const at = args.findIndex((arg) => arg === '--scopes' || arg.startsWith('--scopes='));
    if (at >= 0) parseScopes(args[at] === '--scopes' ? (args[at + 1] ?? '') : args[at]!.slice('--scopes='.length));
    throw new UsageError((error as Error).message);
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'backup' || command === 'restore') process.exit(await runBackupCommand(command, rest));
if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
  if (command === undefined) console.error(`No command given.\n\n${usage}`);
  else console.log(usage);
  process.exit(command === undefined ? 2 : 0);
}

let values: ReturnType<typeof parseCommandLine>;
let connection: Connection;
try {
  values = parseCommandLine(rest);
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  if (values.scopes !== undefined)
    parseScopes(values.scopes, command === 'client:create' || command === 'client:update' ? ['openid'] : []);
  connection = resolveConnection(values.url);
} catch (error) {
  exitWith(error);
}
const { baseUrl, masterKey } = connection;

/** Ends the command for an expected failure: its message, no stack; exit 2 for usage, 1 otherwise. */
function exitWith(error: unknown): never {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n\nRun \`npm run admin -- --help\` for the commands and their options.`);
    process.exit(2);
  }
  if (error instanceof ServiceError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const required = (name: Exclude<keyof typeof values, 'public' | 'yes' | 'help'>) =>
  values[name] ?? fail(`${command} needs --${name}`);
const list = (value: string) => value.split(/[,\s]+/).filter(Boolean);
const segment = (name: 'tenant' | 'key' | 'client' | 'user') => encodeURIComponent(required(name));
const tenantPath = () => `/api/admin/tenants/${segment('tenant')}`;

/** The query string of a list: --size, --after and --before as page parameters, and any filters. */
function pageQuery(filters: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams();
  const parameters = {
    'page[size]': values.size,
    'page[after]': values.after,
    'page[before]': values.before,
    ...filters,
  };
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, value);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** The password from --password, or the first line of stdin (so it stays out of the process list and shell history). */
async function password(): Promise<string> {
  if (values.password !== undefined) return values.password;
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const line = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
  return line || fail(`${command} needs a password: --password, or one line on stdin`);
}

async function call(method: string, path: string, body?: unknown) {
  const answer = await callService(baseUrl, method, path, { token: masterKey, body });
  console.log(
    answer.body !== undefined
      ? JSON.stringify(answer.body, null, 2)
      : JSON.stringify(answer.text ? { status: answer.status, text: answer.text } : { status: answer.status }),
  );
  if (answer.status >= 400) process.exit(1);
}

async function run(): Promise<void> {
  switch (command) {
    case 'quickstart':
      console.log(await quickstart(connection));
      break;
    case 'tenant:create':
      await call('POST', '/api/admin/tenants', { data: { name: required('name') } });
      break;
    case 'tenant:list':
      await call('GET', `/api/admin/tenants${pageQuery()}`);
      break;
    case 'tenant:get':
      await call('GET', tenantPath());
      break;
    case 'tenant:rename':
      await call('PATCH', tenantPath(), { data: { name: required('name') } });
      break;
    case 'tenant:delete':
      if (!values.yes) fail('tenant:delete deletes the tenant and everything it owns for good: add --yes to go ahead');
      await call('DELETE', tenantPath());
      break;
    case 'key:create':
      await call('POST', `${tenantPath()}/api-keys`, {
        data: { name: values.name ?? 'API key', scopes: parseScopes(required('scopes')) },
      });
      break;
    case 'key:list':
      await call('GET', `${tenantPath()}/api-keys${pageQuery()}`);
      break;
    case 'key:get':
      await call('GET', `${tenantPath()}/api-keys/${segment('key')}`);
      break;
    case 'key:rename':
      await call('PATCH', `${tenantPath()}/api-keys/${segment('key')}`, { data: { name: required('name') } });
      break;
    case 'key:revoke':
      await call('DELETE', `${tenantPath()}/api-keys/${segment('key')}`);
      break;
    case 'client:create':
      await call('POST', `${tenantPath()}/oauth-clients`, {
        data: {
          name: required('name'),
          redirect_uris: list(required('redirect-uris')),
          scopes: parseScopes(required('scopes'), ['openid']),
          is_confidential: !values.public,
        },
      });
      break;
    case 'client:list':
      await call('GET', `${tenantPath()}/oauth-clients${pageQuery()}`);
      break;
    case 'client:get':
      await call('GET', `${tenantPath()}/oauth-clients/${segment('client')}`);
      break;
    case 'client:update': {
      const redirectUris = values['redirect-uris'];
      const changes = {
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(redirectUris !== undefined ? { redirect_uris: list(redirectUris) } : {}),
        ...(values.scopes !== undefined ? { scopes: parseScopes(values.scopes, ['openid']) } : {}),
      };
      if (Object.keys(changes).length === 0) fail('client:update needs --name, --redirect-uris or --scopes');
      await call('PATCH', `${tenantPath()}/oauth-clients/${segment('client')}`, { data: changes });
      break;
    }
    case 'client:rotate-secret':
      await call('POST', `${tenantPath()}/oauth-clients/${segment('client')}/secret`);
      break;
    case 'client:delete':
      await call('DELETE', `${tenantPath()}/oauth-clients/${segment('client')}`);
      break;
    case 'user:create':
      await call('POST', `${tenantPath()}/users`, { data: { email: required('email'), password: await password() } });
      break;
    case 'user:list':
      await call('GET', `${tenantPath()}/users${pageQuery({ 'filter[email][eq]': values.email })}`);
      break;
    case 'user:get':
      await call('GET', `${tenantPath()}/users/${segment('user')}`);
      break;
    case 'user:password':
      await call('PUT', `${tenantPath()}/users/${segment('user')}/password`, { data: { password: await password() } });
      break;
    case 'user:delete':
      await call('DELETE', `${tenantPath()}/users/${segment('user')}`);
      break;
    case 'keys:rotate':
      await call('POST', '/api/admin/oauth/signing-keys');
      break;
    default:
      fail(`Unknown command ${command}`);
  }
}

await run().catch(exitWith);
