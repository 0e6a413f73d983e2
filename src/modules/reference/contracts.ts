import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSchema, printSchema } from 'graphql';
import { parse, stringify } from 'yaml';
import { OPENAPI_FILE } from '../../kernel/rest/openapi-yaml';

const SCHEMA_DIR = resolve(import.meta.dirname, '../../../schema');

/** A document served as is: its bytes, media type and strong ETag (a hash of the bytes). */
export interface ServedDocument {
  body: string;
  type: string;
  etag: string;
}

const served = (body: string, type: string): ServedDocument => ({
  body,
  type,
  etag: `"${createHash('sha256').update(body).digest('base64url')}"`,
});

/**
 * The contracts as a client downloads them: the committed `openapi.yaml` (in YAML and JSON) with
 * `servers` naming this deployment, and the printed SDL of every module's schema file.
 */
export function loadContracts(baseUrl: string) {
  const document = parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
  document.servers = [{ url: baseUrl }];
  const sdl = readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(join(SCHEMA_DIR, file), 'utf8'))
    .join('\n');
  return {
    yaml: served(stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 }), 'application/yaml'),
    json: served(JSON.stringify(document), 'application/json; charset=utf-8'),
    sdl: served(printSchema(buildSchema(sdl)), 'text/plain; charset=utf-8'),
  };
}
