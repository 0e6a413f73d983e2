/**
 * The breaking-change rules of `npm run contracts:check` over small pairs of contracts, and the
 * command itself in a temporary git repository: a breaking change fails it until CHANGELOG.md
 * records it under "Breaking".
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addsBreakingEntry } from '../../scripts/contracts/changelog';
import type { Change } from '../../scripts/contracts/changes';
import { graphqlChanges } from '../../scripts/contracts/graphql-diff';
import { openapiChanges } from '../../scripts/contracts/openapi-diff';

const breaking = (changes: Change[]) => changes.filter((change) => change.criticality === 'BREAKING');

const SDL = `
type Query { product(id: ID!): Product }
type Product { id: ID! name: String! status: Status! }
enum Status { ACTIVE ARCHIVED }
input CreateProductInput { name: String! note: String }
type Mutation { createProduct(input: CreateProductInput!): Product! }
`;

describe('GraphQL rules (graphql-inspector)', () => {
  it('flags a removed field, an input field made non-null and a removed enum value as breaking', async () => {
    const changed = SDL.replace(' status: Status!', '')
      .replace('note: String }', 'note: String! }')
      .replace('{ ACTIVE ARCHIVED }', '{ ACTIVE }');
    const found = breaking(await graphqlChanges(SDL, changed));
    expect(found.map((change) => change.location).sort()).toEqual(
      expect.arrayContaining(['CreateProductInput.note', 'Product.status', 'Status.ARCHIVED']),
    );
  });

  it('does not flag an added optional input field or an added type field', async () => {
    const changed = SDL.replace('note: String }', 'note: String tags: [String!] }').replace(
      'status: Status! }',
      'status: Status! sku: String }',
    );
    const changes = await graphqlChanges(SDL, changed);
    expect(changes.length).toBe(2);
    expect(breaking(changes)).toEqual([]);
  });
});

/** A contract of one operation, `POST /items`, with a strict body and a JSON 201. */
function contract(change: (doc: any) => void = () => {}) {
  const doc: any = {
    openapi: '3.1.0',
    paths: {
      '/items': {
        post: {
          operationId: 'createItem',
          parameters: [{ in: 'query', name: 'dry_run', required: false, schema: { type: 'boolean' } }],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ItemInput' } } },
          },
          responses: {
            '201': {
              description: 'created',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['id', 'state'],
                    properties: { id: { type: 'string' }, state: { type: 'string', enum: ['NEW', 'OLD'] } },
                  },
                },
              },
            },
            '400': { description: 'bad' },
          },
        },
      },
    },
    components: {
      schemas: {
        ItemInput: {
          type: 'object',
          additionalProperties: false,
          required: ['sku'],
          properties: {
            sku: { type: 'string', maxLength: 64 },
            kind: { type: 'string', enum: ['A', 'B'] },
            note: { type: ['string', 'null'] },
          },
        },
      },
    },
  };
  change(doc);
  return doc;
}

describe('REST rules', () => {
  const flagged = (change: (doc: any) => void) => breaking(openapiChanges(contract(), contract(change)));

  it.each<[string, (doc: any) => void, string]>([
    ['a new required body field', (d) => (d.components.schemas.ItemInput.required = ['sku', 'note']), 'made required'],
    [
      'a new required body member',
      (d) => {
        d.components.schemas.ItemInput.properties.qty = { type: 'integer' };
        d.components.schemas.ItemInput.required.push('qty');
      },
      'new required field',
    ],
    ['a removed operation', (d) => delete d.paths['/items'].post, 'operation removed'],
    ['a removed response status', (d) => delete d.paths['/items'].post.responses['400'], 'removed'],
    [
      'a removed request enum value',
      (d) => (d.components.schemas.ItemInput.properties.kind.enum = ['A']),
      'no longer accepts "B"',
    ],
    ['a lowered maxLength', (d) => (d.components.schemas.ItemInput.properties.sku.maxLength = 10), 'maxLength lowered'],
    [
      'a narrowed type',
      (d) => (d.components.schemas.ItemInput.properties.note.type = 'string'),
      'no longer accepts null',
    ],
    ['a removed strict body member', (d) => delete d.components.schemas.ItemInput.properties.note, 'removed: clients'],
    [
      'a new required parameter',
      (d) => d.paths['/items'].post.parameters.push({ in: 'query', name: 'x', required: true, schema: {} }),
      'new required parameter',
    ],
    ['a renamed operationId', (d) => (d.paths['/items'].post.operationId = 'addItem'), 'operationId changed'],
    [
      'a removed response field',
      (d) => delete d.paths['/items'].post.responses['201'].content['application/json'].schema.properties.state,
      'removed',
    ],
    [
      'a response field that may now be null',
      (d) =>
        (d.paths['/items'].post.responses['201'].content['application/json'].schema.properties.id.type = [
          'string',
          'null',
        ]),
      'may now be null',
    ],
  ])('flags %s as breaking', (_name, change, message) => {
    const found = flagged(change);
    expect(found.length, JSON.stringify(found)).toBeGreaterThan(0);
    expect(found.map((c) => c.message).join(' | ')).toContain(message);
  });

  it.each<[string, (doc: any) => void]>([
    ['an added optional body field', (d) => (d.components.schemas.ItemInput.properties.tags = { type: 'array' })],
    ['an added operation', (d) => (d.paths['/other'] = { get: { operationId: 'other', responses: { '200': {} } } })],
    [
      'an added optional parameter',
      (d) => d.paths['/items'].post.parameters.push({ in: 'query', name: 'y', schema: {} }),
    ],
    ['a raised maxLength', (d) => (d.components.schemas.ItemInput.properties.sku.maxLength = 128)],
    [
      'an added response field',
      (d) =>
        (d.paths['/items'].post.responses['201'].content['application/json'].schema.properties.at = { type: 'string' }),
    ],
    ['a description', (d) => (d.paths['/items'].post.description = 'Creates an item.')],
  ])('does not flag %s', (_name, change) => {
    expect(flagged(change)).toEqual([]);
  });

  it('calls a new response status and a new response enum value dangerous', () => {
    const changes = openapiChanges(
      contract(),
      contract((d) => {
        d.paths['/items'].post.responses['409'] = { description: 'taken' };
        d.paths['/items'].post.responses['201'].content['application/json'].schema.properties.state.enum.push('GONE');
      }),
    );
    expect(changes.map((c) => [c.criticality, c.message])).toEqual(
      expect.arrayContaining([
        ['DANGEROUS', 'new status'],
        ['DANGEROUS', 'may now be "GONE"'],
      ]),
    );
  });
});

describe('the CHANGELOG rule', () => {
  const log = (breakingEntries: string) =>
    `# Changelog\n\n## [Unreleased]\n\n### Breaking\n${breakingEntries}\n### Added\n- a thing\n\n## [0.2.0]\n`;

  it('takes a new entry under a Breaking heading, and nothing else', () => {
    expect(addsBreakingEntry(log(''), log('- `Product.status` removed; read `Product.state`.\n'))).toBe(true);
    expect(addsBreakingEntry(log('- old entry\n'), log('- old entry\n'))).toBe(false);
    expect(addsBreakingEntry('', '# Changelog\n\n## Breaking\n\n- removed X\n')).toBe(true);
    expect(addsBreakingEntry(log(''), log('').replace('- a thing', '- a thing\n- another'))).toBe(false);
  });
});

describe('npm run contracts:check', () => {
  const repo = resolve(import.meta.dirname, '../..');
  const run = (cwd: string, ...args: string[]) =>
    spawnSync(join(repo, 'node_modules/.bin/tsx'), [join(repo, 'scripts/contracts-check.ts'), ...args], {
      cwd,
      encoding: 'utf8',
    });
  const git = (cwd: string, ...args: string[]) =>
    spawnSync('git', ['-c', 'user.email=ci@example.com', '-c', 'user.name=CI', ...args], { cwd, encoding: 'utf8' });

  it('fails on a breaking change until CHANGELOG.md records it under Breaking', () => {
    const dir = mkdtempSync(join(tmpdir(), 'contracts-'));
    mkdirSync(join(dir, 'schema'));
    cpSync(join(repo, 'openapi.yaml'), join(dir, 'openapi.yaml'));
    cpSync(join(repo, 'schema'), join(dir, 'schema'), { recursive: true });
    writeFileSync(join(dir, 'CHANGELOG.md'), '# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n');
    git(dir, 'init', '-q');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'contracts');

    const first = run(dir);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain('nothing to compare with');
    const unchanged = run(dir, '--base', 'HEAD');
    expect(unchanged.status, unchanged.stderr).toBe(0);
    expect(unchanged.stdout).toContain('none');

    // A field of the SDL removed and an operation of the REST contract removed.
    const sdlFile = join(dir, 'schema/catalog.graphql');
    writeFileSync(
      sdlFile,
      readFileSync(sdlFile, 'utf8').replace('  "Scannable barcodes (GTIN/EAN)."\n  gtin: [String!]!\n', ''),
    );
    const yamlFile = join(dir, 'openapi.yaml');
    writeFileSync(
      yamlFile,
      readFileSync(yamlFile, 'utf8').replace('  /api/oauth/introspect:', '  /api/oauth/introspected:'),
    );
    const failed = run(dir, '--base', 'HEAD');
    expect(failed.status, failed.stderr).toBe(1);
    expect(failed.stdout, failed.stderr).not.toBe('');
    expect(failed.stdout).toMatch(/^ {2}BREAKING {2}POST \/api\/oauth\/introspect: operation removed$/m);
    expect(failed.stdout).toMatch(/^ {2}BREAKING {2}Product\.gtin: /m);
    expect(failed.stderr).toContain('Breaking');

    writeFileSync(
      join(dir, 'CHANGELOG.md'),
      '# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n- `Product.gtin` and `POST /api/oauth/introspect` are gone.\n',
    );
    const recorded = run(dir, '--base', 'HEAD');
    expect(recorded.status, recorded.stderr).toBe(0);
    expect(recorded.stdout).toContain('recorded under "Breaking"');
  });
});
