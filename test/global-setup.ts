import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/kernel/embedded-postgres';
import { applyMigrations } from '../src/kernel/migrations';

export const TEMPLATE_DATABASE = 'template_commerce';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the server's maintenance database; test files create their own databases from it. */
    adminDatabaseUrl: string;
  }
}

/**
 * One real PostgreSQL for the whole run (from embedded-postgres) with a migrated template
 * database; each test file clones the template into a fresh database of its own.
 */
export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(join(tmpdir(), 'commerce-test-'));
  const server = await startEmbeddedPostgres(dataDir, { database: 'postgres' });
  const templateUrl = server.url.replace(/\/postgres$/, `/${TEMPLATE_DATABASE}`);
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await client.end();
  await applyMigrations(templateUrl);
  project.provide('adminDatabaseUrl', server.url);
  return async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
