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
  key:create --tenant <tenant id> --scopes <a,b,...> [--name <name>]
                                                               issue an API key (printed once)
  key:revoke --tenant <tenant id> --key <key id>               revoke an API key
  client:create --tenant <tenant id> --name <name> --redirect-uris <uri,uri,...> --scopes <a,b,...> [--public]
                                                               register an OAuth client (secret printed once;
                                                               --public: no secret, PKCE required)
  user:create --tenant <tenant id> --email <email> [--password <password>]
                                                               create a user for the OAuth login page; without
                                                               --password the password is read from stdin
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
  },
  strict: true,
});

const config = loadConfig();
const baseUrl = config.publicBaseUrl ?? `http://${config.host}:${config.port}`;
const keyFile = masterKeyFile(config.dataDir);
const masterKey = config.masterKey ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
if (!masterKey) fail(`No master key: set MASTER_KEY, or start the service once so that ${keyFile} exists.`);

const required = (name: Exclude<keyof typeof values, 'public'>) => values[name] ?? fail(`${command} needs --${name}`);
const list = (value: string) => value.split(/[,\s]+/).filter(Boolean);

/** The password from --password, or the first line of stdin (so it stays out of the process list and shell history). */
async function password(): Promise<string> {
  if (values.password !== undefined) return values.password;
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const line = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
  return line || fail('user:create needs a password: --password, or one line on stdin');
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
  case 'key:create':
    await call('POST', `/api/admin/tenants/${encodeURIComponent(required('tenant'))}/api-keys`, {
      data: {
        name: values.name ?? 'API key',
        scopes: required('scopes')
          .split(/[,\s]+/)
          .filter(Boolean),
      },
    });
    break;
  case 'key:revoke':
    await call(
      'DELETE',
      `/api/admin/tenants/${encodeURIComponent(required('tenant'))}/api-keys/${encodeURIComponent(required('key'))}`,
    );
    break;
  case 'client:create':
    await call('POST', `/api/admin/tenants/${encodeURIComponent(required('tenant'))}/oauth-clients`, {
      data: {
        name: required('name'),
        redirect_uris: list(required('redirect-uris')),
        scopes: list(required('scopes')),
        is_confidential: !values.public,
      },
    });
    break;
  case 'user:create':
    await call('POST', `/api/admin/tenants/${encodeURIComponent(required('tenant'))}/users`, {
      data: { email: required('email'), password: await password() },
    });
    break;
  case 'keys:rotate':
    await call('POST', '/api/admin/oauth/signing-keys');
    break;
  default:
    fail(command ? `Unknown command ${command}` : 'No command given');
}
