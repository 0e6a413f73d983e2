/**
 * `npm run admin -- <command>` for the listing, reading, renaming, rotating and deleting commands,
 * run as a child process against a listening service: each prints the API's JSON answer and exits
 * 0, or 1 when the API refused, or 2 for a command line it cannot send.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../helpers/admin-cli';
import { createKey, createTenant, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { clientToken, createOAuthClient, createUser, startListeningApp, type TestClient } from '../helpers/oauth';

const { rest, origin, databaseUrl } = await startListeningApp();
/** The admin command against this test's service. */
const admin = (args: string[], stdin = '') => runAdmin(origin, args, stdin);

let tenant: Tenant;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Terminal tenant');
  client = await createOAuthClient(rest, tenant.id, { name: 'Terminal client', scopes: ['proxies:read'] });
});

describe('tenant commands', () => {
  it('lists page by page, shows and renames a tenant', async () => {
    await createTenant(rest, 'Second tenant');
    const first = await admin(['tenant:list', '--size', '1']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.json.data.map((t: Tenant) => t.id)).toEqual([tenant.id]);
    const second = await admin(['tenant:list', '--size', '1', '--after', first.json.page.after]);
    expect(second.json.data.map((t: { name: string }) => t.name)).toEqual(['Second tenant']);

    const renamed = await admin(['tenant:rename', '--tenant', tenant.id, '--name', 'Renamed at the terminal']);
    expect(renamed.status, renamed.stderr).toBe(0);
    const shown = await admin(['tenant:get', '--tenant', tenant.id]);
    expect(shown.json.data).toMatchObject({ id: tenant.id, name: 'Renamed at the terminal' });
  });

  it('deletes a tenant only with --yes', async () => {
    const doomed = await createTenant(rest, 'Doomed at the terminal');
    const unconfirmed = await admin(['tenant:delete', '--tenant', doomed.id]);
    expect(unconfirmed.status).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    expect(await sql(databaseUrl, 'SELECT id FROM tenants WHERE id = $1', [doomed.id])).toHaveLength(1);

    const deleted = await admin(['tenant:delete', '--tenant', doomed.id, '--yes']);
    expect(deleted.status, deleted.stderr).toBe(0);
    expect(deleted.json).toEqual({ status: 204 });
    expect(await sql(databaseUrl, 'SELECT id FROM tenants WHERE id = $1', [doomed.id])).toEqual([]);
    const again = await admin(['tenant:delete', '--tenant', doomed.id, '--yes']);
    expect(again.status).toBe(1);
    expect(again.json.error.code).toBe(404);
  });
});

describe('key commands', () => {
  it('lists, shows and renames API keys without their secrets', async () => {
    const secret = await createKey(rest, tenant.id, ['search']);
    const listed = await admin(['key:list', '--tenant', tenant.id]);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(secret.slice(-43));
    const key = listed.json.data.at(-1);
    expect(key).toMatchObject({ scopes: ['search'], revoked_at: null });
    const renamed = await admin(['key:rename', '--tenant', tenant.id, '--key', key.id, '--name', 'search box']);
    expect(renamed.json.data.name).toBe('search box');
    expect((await admin(['key:get', '--tenant', tenant.id, '--key', key.id])).json.data.name).toBe('search box');
  });
});

describe('client commands', () => {
  it('lists, shows, changes, rotates the secret of and deletes an OAuth client', async () => {
    const listed = await admin(['client:list', '--tenant', tenant.id]);
    expect(listed.json.data.map((c: { client_id: string }) => c.client_id)).toEqual([client.client_id]);
    expect(listed.stdout).not.toContain(client.client_secret!);
    const clientArgs = ['--tenant', tenant.id, '--client', client.client_id];

    const nothing = await admin(['client:update', ...clientArgs]);
    expect(nothing.status).toBe(2);
    const updated = await admin([
      'client:update',
      ...clientArgs,
      '--name',
      'Back office',
      '--scopes',
      'proxies:read,openid',
    ]);
    expect(updated.status, updated.stderr).toBe(0);
    expect(updated.json.data).toMatchObject({ name: 'Back office', scopes: ['proxies:read', 'openid'] });
    expect((await admin(['client:get', ...clientArgs])).json.data.name).toBe('Back office');

    const rotated = await admin(['client:rotate-secret', ...clientArgs]);
    expect(rotated.status, rotated.stderr).toBe(0);
    const secret = rotated.json.data.client_secret as string;
    expect(secret).toMatch(/^cps_/);
    const token = await clientToken(rest, { client_id: client.client_id, client_secret: secret });
    expect((await rest.get('/api/storage/edge/proxies', { token })).status).toBe(200);

    const deleted = await admin(['client:delete', ...clientArgs]);
    expect(deleted.json).toEqual({ status: 204 });
    expect((await rest.get('/api/storage/edge/proxies', { token })).status).toBe(401);
  });
});

describe('user commands', () => {
  it('finds a user by e-mail, shows them, sets their password from stdin and deletes them', async () => {
    const user = await createUser(rest, tenant.id, 'terminal@example.com');
    const found = await admin(['user:list', '--tenant', tenant.id, '--email', 'Terminal@Example.com']);
    expect(found.json.data.map((u: { id: string }) => u.id)).toEqual([user.id]);
    const userArgs = ['--tenant', tenant.id, '--user', user.id];
    expect((await admin(['user:get', ...userArgs])).json.data.email).toBe('terminal@example.com');

    const [before] = await sql<{ password_hash: string }>(
      databaseUrl,
      'SELECT password_hash FROM users WHERE id = $1',
      [user.id],
    );
    const changed = await admin(['user:password', ...userArgs], 'typed on stdin 456\n');
    expect(changed.status, changed.stderr).toBe(0);
    expect(changed.json).toEqual({ status: 204 });
    const [after] = await sql<{ password_hash: string }>(databaseUrl, 'SELECT password_hash FROM users WHERE id = $1', [
      user.id,
    ]);
    expect(after!.password_hash).not.toBe(before!.password_hash);
    const tooShort = await admin(['user:password', ...userArgs, '--password', 'short']);
    expect(tooShort.status).toBe(1);
    expect(tooShort.json.error.code).toBe(400);

    expect((await admin(['user:delete', ...userArgs])).json).toEqual({ status: 204 });
    expect((await admin(['user:get', ...userArgs])).json.error.code).toBe(404);
  });
});

describe('help and the command line', () => {
  it.each([['--help'], ['help'], ['-h'], ['key:create', '--help']])(
    '%s lists the commands and exits 0',
    async (...args) => {
      const run = await admin(args);
      expect(run.status, run.stderr).toBe(0);
      for (const command of ['quickstart', 'tenant:create', 'key:create', 'client:create', 'user:create', 'backup'])
        expect(run.stdout).toContain(command);
      expect(run.stdout).toContain('--url');
    },
  );

  /** A refusal a person can act on: the message, the pointer to --help, and no stack trace. */
  const expectUsageError = (run: { status: number | null; stderr: string; stdout: string }, message: RegExp) => {
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain('npm run admin -- --help');
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr).not.toMatch(/TypeError|ERR_PARSE_ARGS/);
  };

  it('refuses an unquoted * that the shell turned into file names, naming the valid scopes', async () => {
    // What `--scopes *` becomes in a folder holding these files.
    const run = await admin(['key:create', '--tenant', tenant.id, '--scopes', 'README.md', 'package.json', 'src']);
    expectUsageError(run, /--scopes "README\.md" is not a list of scopes \(unknown: README\.md\)/);
    expect(run.stderr).toContain('Valid scopes: proxies:read, proxies:write, indexes:read');
    expect(run.stderr).toContain("--scopes '*'");
    const keys = await admin(['key:list', '--tenant', tenant.id]);
    expect(keys.json.data.some((key: { scopes: string[] }) => key.scopes.includes('README.md'))).toBe(false);
  });

  it('refuses a misspelt or empty scope before sending anything', async () => {
    expectUsageError(
      await admin(['key:create', '--tenant', tenant.id, '--scopes', 'proxies:read,proxies:raed']),
      /unknown: proxies:raed.*\n.*Valid scopes: /,
    );
    expectUsageError(await admin(['key:create', '--tenant', tenant.id, '--scopes', ',']), /is not a list of scopes/);
    expectUsageError(await admin(['key:create', '--tenant', tenant.id, '--scopes=*.md']), /unknown: \*\.md/);
    const client = await admin([
      'client:create',
      '--tenant',
      tenant.id,
      '--name',
      'x',
      '--redirect-uris',
      'https://a.example/cb',
      '--scopes',
      'openid,search',
    ]);
    expect(client.status, client.stderr).toBe(0);
  });

  it('refuses unknown options and commands with a message, not a stack trace', async () => {
    expectUsageError(await admin(['tenant:list', '--bogus']), /Unknown option '--bogus'/);
    expectUsageError(await admin(['tenant:list', 'stray']), /Unexpected argument 'stray'/);
    expectUsageError(await admin(['tenant:lsit']), /Unknown command tenant:lsit/);
    expectUsageError(await admin(['tenant:list', '--url', 'not a url']), /--url must be the service's http\(s\) URL/);
  });

  it('finds the service as it listens: --url, else PUBLIC_BASE_URL, else HOST and PORT', async () => {
    const { port } = new URL(origin);
    const elsewhere = 'http://127.0.0.1:9';
    const byUrl = await admin(['tenant:list', '--size', '1', '--url', origin], '');
    expect(byUrl.status, byUrl.stderr).toBe(0);
    const overridden = await runAdmin(elsewhere, ['tenant:list', '--size', '1', '--url', origin]);
    expect(overridden.status, overridden.stderr).toBe(0);
    const byHostAndPort = await runAdmin('', ['tenant:list', '--size', '1'], '', { HOST: '0.0.0.0', PORT: port });
    expect(byHostAndPort.status, byHostAndPort.stderr).toBe(0);
    expect(byHostAndPort.json.data).toHaveLength(1);

    const unreachable = await runAdmin(elsewhere, ['tenant:list']);
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toContain(`Cannot reach the service at ${elsewhere}`);
    expect(unreachable.stderr).not.toMatch(/^\s+at /m);
    const badPort = await runAdmin('', ['tenant:list'], '', { PORT: 'eighty' });
    expectUsageError(badPort, /Invalid configuration: PORT/);
  });
});

describe('quickstart', () => {
  it('makes a tenant and a key with every scope, prints lines that work, and keeps the tenant when run again', async () => {
    const first = await admin(['quickstart']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain(`export BASE=${origin}\n`);
    const key = /^export KEY=(cpk_\S+)$/m.exec(first.stdout)![1]!;
    const tenantId = /^Tenant +Quickstart (\S+) \(created\)$/m.exec(first.stdout)![1]!;
    expect((await rest.get('/api/instant/indexes', { token: key })).status).toBe(200);
    // The console's public client, registered once for the tenant, with the console as its redirect URI.
    const consoleUrl = new RegExp(`^Console: ${origin}/console/\\?client_id=(\\S+)$`, 'm');
    const consoleClientId = consoleUrl.exec(first.stdout)![1]!;
    const consoleClient = await rest.get(`/api/admin/tenants/${tenantId}/oauth-clients/${consoleClientId}`, {
      token: TEST_MASTER_KEY,
    });
    expect(consoleClient.body.data).toMatchObject({
      name: 'Console',
      is_confidential: false,
      redirect_uris: [`${origin}/console/`],
    });

    // Each curl line, pasted into a shell after the two exports (the edge page needs the internet).
    const curls = first.stdout.split('\n').filter((line) => line.startsWith('curl ') && !line.includes('$BASE/edge/'));
    expect(curls).toHaveLength(3);
    for (const line of curls) {
      // Asynchronously: this test's own process serves the requests.
      const ran = await promisify(execFile)('bash', ['-c', line], {
        env: { PATH: process.env.PATH, BASE: origin, KEY: key },
        encoding: 'utf8',
      });
      const body = JSON.parse(ran.stdout);
      expect(body.error, `${line}\n${ran.stdout}`).toBeUndefined();
    }

    const second = await admin(['quickstart']);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toContain(`Quickstart ${tenantId} (already there: kept)`);
    const secondKey = /^export KEY=(cpk_\S+)$/m.exec(second.stdout)![1]!;
    expect(consoleUrl.exec(second.stdout)![1]).toBe(consoleClientId);
    expect(secondKey).not.toBe(key);
    expect((await rest.get('/api/instant/indexes', { token: key })).status).toBe(200);
    expect((await rest.get('/api/instant/indexes', { token: secondKey })).status).toBe(200);
    const tenants = await sql(databaseUrl, "SELECT id FROM tenants WHERE name = 'Quickstart'");
    expect(tenants).toHaveLength(1);
  });
});
