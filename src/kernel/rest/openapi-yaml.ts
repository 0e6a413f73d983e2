import { resolve } from 'node:path';
import { stringify } from 'yaml';
import { buildOpenApiDocument } from './openapi';
import type { RestOperation } from './operation';

export const OPENAPI_FILE = resolve(import.meta.dirname, '../../../openapi.yaml');

const HEADER = `# Generated from the zod schemas in src/modules/*/*.routes.ts by \`npm run openapi\`. Do not edit.\n`;

/** The committed contract file's exact text. */
export function renderOpenApiYaml(operations: RestOperation[]): string {
  return HEADER + stringify(buildOpenApiDocument(operations), { aliasDuplicateObjects: false, lineWidth: 0 });
}
