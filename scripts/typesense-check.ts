// `npm run typesense:check`: with TYPESENSE_URL (and TYPESENSE_API_KEY) set, reports the Typesense
// server's version, whether this service supports it, and runs a small round trip in a throwaway
// collection. Exits 1 when the server is unsupported or the round trip fails, 2 without TYPESENSE_URL.
import { ConfigError, loadConfig } from '../src/kernel/config';
import { typesenseClient } from '../src/modules/search/engine/typesense-engine';
import { checkTypesense } from './typesense/check';

let config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(2);
}
if (!config.typesenseUrl) {
  console.error('TYPESENSE_URL is not set: there is no Typesense server to check (set it and TYPESENSE_API_KEY).');
  process.exit(2);
}
const client = typesenseClient({ url: config.typesenseUrl, apiKey: config.typesenseApiKey ?? '' });
const check = await checkTypesense(client, config.typesenseUrl);
console.log(check.lines.join('\n'));
process.exit(check.ok ? 0 : 1);
