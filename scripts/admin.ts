// `npm run admin -- <command>`: the admin API for a person at a terminal. Talks to a running
// service (PUBLIC_BASE_URL, or http://HOST:PORT) with the master key (MASTER_KEY, or the key the
// embedded mode keeps in DATA_DIR) and prints the JSON answer.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/kernel/config';
import { masterKeyFile } from '../src/kernel/master-key';
import { backupUsage, runBackupCommand } from './backup';

const usage = `Usage: npm run admin -- <command> [options]

Commands:
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

Scopes: proxies:read proxies:write indexes:read indexes:write search inventory:read
        inventory:write catalog:read catalog:write orders:read orders:write, or * for all.
        OAuth clients may also have openid (ID tokens).`;

function fail(message: string): never {
  console.error(`${message}\n\n${usage}`);
  process.exit(2);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'backup' || command === 'restore') process.exit(await runBackupCommand(command, rest));
const { values } = parseArgs({
  args: rest,
  options: {
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
  },
  strict: true,
});

const config = loadConfig();
const baseUrl = config.publicBaseUrl ?? `http://${config.host}:${config.port}`;
const keyFile = masterKeyFile(config.dataDir);
const masterKey = config.masterKey ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
if (!masterKey) fail(`No master key: set MASTER_KEY, or start the service once so that ${keyFile} exists.`);

const required = (name: Exclude<keyof typeof values, 'public' | 'yes'>) =>
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
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${masterKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    console.error(`Cannot reach the service at ${baseUrl}: is \`npm start\` running?`);
    process.exit(1);
  }
  const text = await response.text();
  console.log(text ? JSON.stringify(JSON.parse(text), null, 2) : JSON.stringify({ status: response.status }));
  if (!response.ok) process.exit(1);
}

switch (command) {
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
      data: { name: values.name ?? 'API key', scopes: list(required('scopes')) },
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
        scopes: list(required('scopes')),
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
      ...(values.scopes !== undefined ? { scopes: list(values.scopes) } : {}),
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
    fail(command ? `Unknown command ${command}` : 'No command given');
}
