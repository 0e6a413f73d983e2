/**
 * The examples of openapi.yaml, which the reference (`/docs`) shows, are values the API accepts
 * or answers: each validates against the schema it sits in, and the main schemas have one.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';

type Schema = Record<string, unknown>;
const document = parse(readFileSync(OPENAPI_FILE, 'utf8')) as { components: { schemas: Record<string, Schema> } };

const WITH_EXAMPLE = [
  'ErrorEnvelope',
  'Proxy',
  'ProxyInput',
  'ProxyReplaceInput',
  'Index',
  'IndexInput',
  'DocumentsUpsert',
  'StoredDocument',
  'SearchRequest',
  'SearchResponseEntry',
  'SearchSettings',
  'SearchSettingsInput',
  'InventoryItem',
  'InventoryItemCreate',
];

/** JSON pointers of every schema in a component that carries an `example`. */
function examplePointers(schema: unknown, pointer: string, found: string[] = []): string[] {
  if (typeof schema !== 'object' || schema === null) return found;
  if (Array.isArray(schema)) {
    schema.forEach((member, index) => examplePointers(member, `${pointer}/${index}`, found));
    return found;
  }
  if ('example' in schema) found.push(pointer);
  for (const [key, value] of Object.entries(schema)) {
    if (key !== 'example' && key !== 'examples')
      examplePointers(value, `${pointer}/${key.replaceAll('/', '~1')}`, found);
  }
  return found;
}

const at = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((node, key) => (node as Schema)[key.replaceAll('~1', '/')], document);

describe('examples of openapi.yaml', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components });

  it('are on the main request and response schemas', () => {
    const missing = WITH_EXAMPLE.filter((name) => document.components.schemas[name]?.example === undefined);
    expect(missing).toEqual([]);
  });

  it('validate against the schema they belong to', () => {
    const pointers = examplePointers(document.components, '#/components');
    expect(pointers.length).toBeGreaterThan(WITH_EXAMPLE.length);
    const invalid = pointers.flatMap((pointer) => {
      const validate = ajv.compile({ $ref: `openapi${pointer}` });
      const example = (at(pointer) as Schema).example;
      return validate(example) ? [] : [{ pointer, errors: validate.errors }];
    });
    expect(invalid).toEqual([]);
  });
});
