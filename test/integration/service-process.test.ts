import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeArguments } from '../../scripts/start-command';
import { freePort } from '../../src/kernel/embedded-postgres';
import { createTestDatabase } from '../helpers/db';
import {
  root,
  startServiceProcess as startService,
  temporaryDir,
  type ServiceProcess as Service,
} from '../helpers/service-process';

const tsx = join(root, 'node_modules/.bin/tsx');
const migrationCount = readdirSync(join(root, 'prisma/migrations'), { withFileTypes: true }).filter((entry) =>
  entry.isDirectory(),
).length;
const firstMigration = readdirSync(join(root, 'prisma/migrations')).sort()[0]!;

/** The colour codes of a terminal's log lines (ESC [ ... m). */
const COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The lines of a start's output, without colours, carriage returns and trailing empty lines. */
function lines(output: string): string[] {
  const plain = output.replace(COLOURS, '').replace(/\r/g, '').split('\n');
  while (plain.length > 0 && plain.at(-1)!.trim() === '') plain.pop();
  return plain;
}

const url = (service: Service, path: string) => `http://127.0.0.1:${service.port}${path}`;

async function createTenant(service: Service, masterKey: string, name: string) {
  return fetch(url(service, '/api/admin/tenants'), {
    method: 'POST',
    headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { name } }),
  });
}

describe('the service process', () => {
  it('serves with embedded PostgreSQL, stops cleanly on SIGTERM and keeps its data across restarts', async () => {
    const dataDir = temporaryDir();
    const first = await startService({ DATA_DIR: dataDir });
    // Not a terminal: JSON lines, the last saying where the new key is kept, never the key.
    expect(lines(first.output()).at(-1)).toContain('"msg":"listening"');
    expect(first.output()).toContain('"masterKeyGenerated":true');
    // How many migrations the first start applied, in one line; not their names.
    expect(lines(first.output()).filter((line) => /migration/.test(line))).toEqual([
      expect.stringContaining(`"msg":"applied ${migrationCount} migrations"`),
    ]);
    expect(first.output()).not.toContain(firstMigration);
    expect(first.output()).toContain(`"masterKeyFile":${JSON.stringify(join(dataDir, 'master.key'))}`);
    const masterKey = readFileSync(join(dataDir, 'master.key'), 'utf8').trim();
    expect(first.output()).not.toContain(masterKey);

    const health = await fetch(url(first, '/healthz'));
    expect(await health.json()).toEqual({ status: 'ok', database: 'up' });
    const tenant = await createTenant(first, masterKey, 'Kept');
    expect(tenant.status).toBe(201);
    const tenantId = ((await tenant.json()) as { data: { id: string } }).data.id;

    // The admin command wraps the same API for a person at a terminal.
    const admin = (...args: string[]) =>
      JSON.parse(
        execFileSync(tsx, ['scripts/admin.ts', ...args], {
          cwd: root,
          env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(first.port), DATA_DIR: dataDir },
          encoding: 'utf8',
        }),
      );
    const cliTenant = admin('tenant:create', '--name', 'From the terminal');
    expect(cliTenant.data.name).toBe('From the terminal');
    const cliKey = admin('key:create', '--tenant', cliTenant.data.id, '--scopes', 'proxies:read,proxies:write');
    expect(cliKey.data.scopes).toEqual(['proxies:read', 'proxies:write']);
    const listed = await fetch(url(first, '/api/storage/edge/proxies'), {
      headers: { authorization: `Bearer ${cliKey.data.key}` },
    });
    expect(listed.status).toBe(200);
    expect(admin('key:revoke', '--tenant', cliTenant.data.id, '--key', cliKey.data.id)).toEqual({ status: 204 });
    const revoked = await fetch(url(first, '/api/storage/edge/proxies'), {
      headers: { authorization: `Bearer ${cliKey.data.key}` },
    });
    expect(revoked.status).toBe(401);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    const second = await startService({ DATA_DIR: dataDir });
    expect(second.output()).toContain('"masterKeyGenerated":false');
    expect(second.output()).not.toMatch(/applied \d+ migration/);
    expect(lines(second.output()).at(-1)).toContain('"msg":"listening"');
    const key = await fetch(url(second, `/api/admin/tenants/${tenantId}/api-keys`), {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { name: 'after restart', scopes: ['*'] } }),
    });
    expect(key.status).toBe(201);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  });

  it.skipIf(!existsSync('/usr/bin/script'))(
    'in a terminal, says in one line how many migrations it applied and ends its start with the banner',
    async () => {
      // A terminal of its own: script(1) runs the service on a pseudo-terminal and copies what it shows.
      const dataDir = temporaryDir();
      const port = await freePort();
      const command = `exec ${[process.execPath, ...startNodeArguments()].join(' ')}`;
      const terminal = spawn('script', ['-qfec', command, '/dev/null'], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          HOST: '127.0.0.1',
          PORT: String(port),
          DATA_DIR: dataDir,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      terminal.stdout.on('data', (chunk) => (output += chunk));
      terminal.stderr.on('data', (chunk) => (output += chunk));
      const exited = new Promise<number | null>((resolveExit) => terminal.on('exit', (code) => resolveExit(code)));
      await expect.poll(() => output, { timeout: 60_000, interval: 100 }).toMatch(/demo data +npm run seed/);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      // The service is script's only child (`exec`, no shell in between); stopping it ends the start's output.
      const servicePid = Number(execFileSync('pgrep', ['-P', String(terminal.pid)], { encoding: 'utf8' }).trim());
      process.kill(servicePid, 'SIGTERM');
      expect(await exited).toBe(0);

      const shown = lines(output);
      const stopping = shown.findIndex((line) => line.includes('SIGTERM: finishing requests in flight and stopping'));
      expect(stopping, output).toBeGreaterThan(0);
      const start = lines(shown.slice(0, stopping).join('\n'));
      expect(start.at(-1), 'the banner is the last line of the start').toMatch(/demo data +npm run seed/);
      expect(start.at(-7)).toBe(`Commerce Platform API listening on http://127.0.0.1:${port}`);
      expect(start.filter((line) => /migration/.test(line))).toEqual([
        expect.stringMatching(new RegExp(`INFO: applied ${migrationCount} migrations$`)),
      ]);
      expect(output).not.toContain(firstMigration);
    },
    120_000,
  );

  it('after a killed process, stops the PostgreSQL server it left running and starts on the same data', async () => {
    const dataDir = temporaryDir();
    const killed = await startService({ DATA_DIR: dataDir });
    // SIGKILL leaves no chance to stop PostgreSQL, which runs in a session of its own.
    killed.child.kill('SIGKILL');
    await killed.exited;
    const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true);
    const serverPid = () => Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0]!, 10);
    const leftPid = serverPid();
    expect(() => process.kill(leftPid, 0)).not.toThrow();

    const next = await startService({ DATA_DIR: dataDir });
    expect(next.output()).toContain('stopped a PostgreSQL server a previous process left running');
    expect(await (await fetch(url(next, '/healthz'))).json()).toEqual({ status: 'ok', database: 'up' });
    // A server of its own (the one left was stopped; the cluster takes one server at a time).
    expect(serverPid()).not.toBe(leftPid);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
  });

  describe.each([
    ['SIGTERM sent to the npm process alone', 'SIGTERM', 'npm'],
    ['SIGTERM sent to the service process alone', 'SIGTERM', 'service'],
    ['SIGINT sent to the whole process group (Ctrl-C in a terminal)', 'SIGINT', 'group'],
  ] as const)('%s', (_name, signal, target) => {
    it('finishes every request in flight with PostgreSQL still up, refuses new ones, and exits 0', async () => {
      // The requests in flight are proxied ones whose origin answers only when told to, so the test
      // knows the service is inside them when the signal arrives, however loaded the machine.
      const inFlightCount = 5;
      let arrivals = 0;
      let allArrived!: () => void;
      const originReached = new Promise<void>((resolveArrived) => (allArrived = resolveArrived));
      let release!: () => void;
      const released = new Promise<void>((resolveRelease) => (release = resolveRelease));
      const origin = createServer(async (request, response) => {
        if ((arrivals += 1) === inFlightCount) allArrived();
        await released;
        response.end(`answered ${request.url}`);
      });
      await new Promise<void>((resolveListen) => origin.listen(0, '127.0.0.1', resolveListen));
      const originPort = (origin.address() as AddressInfo).port;

      const dataDir = temporaryDir();
      const service = await startService({ DATA_DIR: dataDir, EDGE_ALLOW_PRIVATE_ORIGINS: 'true' }, 'npm');
      expect(service.output(), 'the service started and listens').toContain('"msg":"listening"');
      const masterKey = readFileSync(join(dataDir, 'master.key'), 'utf8').trim();
      const tenant = (await (await createTenant(service, masterKey, 'In flight')).json()) as { data: { id: string } };
      const keyResponse = await fetch(url(service, `/api/admin/tenants/${tenant.data.id}/api-keys`), {
        method: 'POST',
        headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { name: 'in flight', scopes: ['*'] } }),
      });
      const apiKey = ((await keyResponse.json()) as { data: { key: string } }).data.key;
      const proxy = await fetch(url(service, '/api/storage/edge/proxies'), {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          data: { key: 'slow', routes: { path: '*', origin: { uri: `http://127.0.0.1:${originPort}/` } } },
        }),
      });
      expect(proxy.status).toBe(201);

      const inFlight = Array.from({ length: inFlightCount }, (_, index) => fetch(url(service, `/edge/slow/${index}`)));
      const early = await Promise.race([
        originReached.then(() => null),
        Promise.any(inFlight).then(async (r) => `${r.status} ${await r.clone().text()}`),
      ]);
      expect(early, 'a proxied request answered before reaching the origin').toBeNull();

      // The service is the npm process's only child: npm runs it with `exec`, no shell in between.
      const servicePid = Number(execFileSync('pgrep', ['-P', String(service.child.pid)], { encoding: 'utf8' }).trim());
      const postmasterPid = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (target === 'npm') service.child.kill(signal);
      else if (target === 'service') process.kill(servicePid, signal);
      else process.kill(-service.child.pid!, signal);

      // Once the listener is closed, new connections are refused; PostgreSQL keeps running meanwhile.
      await expect
        .poll(
          async () =>
            fetch(url(service, '/healthz')).then(
              () => 'accepted',
              () => 'refused',
            ),
          { timeout: 10_000 },
        )
        .toBe('refused');
      expect(() => process.kill(postmasterPid, 0), 'PostgreSQL stopped while requests were in flight').not.toThrow();
      release();
      const answers = await Promise.all(inFlight.map(async (r) => `${(await r).status} ${await (await r).text()}`));
      expect(answers).toEqual(Array.from({ length: inFlightCount }, (_, index) => `200 answered /${index}`));
      expect(await service.exited).toBe(0);
      expect(service.output()).toContain(`${signal}: finishing requests in flight and stopping`);
      // PostgreSQL removes its pid file when it has shut down cleanly.
      expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
      origin.close();
    });
  });

  it('uses DATABASE_URL instead of the embedded server when it is set', async () => {
    const dataDir = temporaryDir();
    const databaseUrl = await createTestDatabase();
    const masterKey = 'mk_external_database_master_key_0123456789';
    const service = await startService({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, MASTER_KEY: masterKey });
    expect((await createTenant(service, masterKey, 'External')).status).toBe(201);
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });

  it('refuses to start with an invalid configuration, naming the variable', async () => {
    const dataDir = temporaryDir();
    const badPort = await startService({ DATA_DIR: dataDir, PORT: 'eighty' });
    expect(await badPort.exited).toBe(1);
    expect(badPort.output()).toContain('Invalid configuration: PORT');
    const noMasterKey = await startService({ DATA_DIR: dataDir, DATABASE_URL: 'postgresql://localhost/x' });
    expect(await noMasterKey.exited).toBe(1);
    expect(noMasterKey.output()).toContain('MASTER_KEY is required when DATABASE_URL is set');
  });
});
