// `npm run seed`: a demo shop in the running service, made through its public API (see
// scripts/seed/demo-shop.ts). Finds the service as `npm run admin` does (--url, PUBLIC_BASE_URL,
// or HOST and PORT). Secrets the API shows once (the demo API key, the user's password) are kept
// in DATA_DIR/demo-seed.json beside the master key, so that a second run can check everything
// without making anything and still print them.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/kernel/config';
import { resolveConnection, ServiceError, UsageError } from './admin/connection';
import { DEMO, seedDemoShop, type SeedState } from './seed/demo-shop';

const usage = `Usage: npm run seed [-- [--url <url>] [--products <n>]]

Makes a demo shop in the running service, through its API: a tenant with an API key, ${DEMO.warehouses.length} warehouses
with stock, a sales channel, 1,000 products (--products: another number, 1 to 1000), a search index with
facets, sorts and synonyms, the public search engine "${DEMO.proxyKey}" and its demo page, an OAuth client and a
user. Run again, it makes only what is missing, and says when nothing was.`;

async function main(): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: { url: { type: 'string' }, products: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const productCount = values.products === undefined ? 1000 : Number(values.products);
  if (!Number.isInteger(productCount) || productCount < 1 || productCount > 1000) {
    throw new UsageError('--products must be a whole number from 1 to 1000');
  }
  const connection = resolveConnection(values.url);
  const stateFile = join(loadConfig().dataDir, 'demo-seed.json');
  let previous: SeedState | undefined;
  try {
    previous = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as SeedState) : undefined;
  } catch {
    previous = undefined;
  }

  const started = Date.now();
  const report = await seedDemoShop(connection, previous, productCount);
  mkdirSync(join(stateFile, '..'), { recursive: true });
  writeFileSync(stateFile, `${JSON.stringify(report.state, null, 2)}\n`, { mode: 0o600 });

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(report.lines.join('\n'));
  console.log('');
  console.log(`demo page        ${connection.baseUrl}/demo/${DEMO.proxyKey}`);
  console.log(`try              export BASE=${connection.baseUrl} KEY=${report.state.apiKey}`);
  console.log(
    `                 curl -s "$BASE/api/instant/search/${DEMO.proxyKey}" -H 'Content-Type: application/json' ` +
      `-d '{"data":[{"q":"lamp","facets":["brand"],"limit":3}]}'`,
  );
  console.log('');
  console.log(
    report.changes.length === 0
      ? `Nothing changed: the demo shop was already complete (checked in ${seconds} s).`
      : `Seeded in ${seconds} s: ${report.changes.length} change(s) (${[...new Set(report.changes)].join(', ')}).`,
  );
  // Last, for `eval "$(npm run -s seed | grep '^export ')"`: the demo shop is a tenant of its own,
  // which the quickstart's key does not see, so the guides use these from here on.
  console.log('');
  console.log(`export BASE=${connection.baseUrl}`);
  console.log(`export KEY=${report.state.apiKey}`);
  for (const [name, value] of Object.entries(report.ids)) console.log(`export ${name}=${value}`);
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n\n${usage}`);
    process.exitCode = 2;
  } else if (error instanceof ServiceError) {
    console.error(error.message);
    process.exitCode = 1;
  } else throw error;
}
