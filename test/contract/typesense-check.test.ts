/**
 * `npm run typesense:check` against the Typesense stand-in: the version report, the refusal of an
 * unsupported server, and the round trip's exact requests, including its clean-up when it fails.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { typesenseClient } from '../../src/modules/search/engine/typesense-engine';
import { checkTypesense } from '../../scripts/typesense/check';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const root = resolve(import.meta.dirname, '../..');
const standIns: TypesenseStandIn[] = [];
afterEach(async () => {
  for (const standIn of standIns.splice(0)) await standIn.close();
});

async function standInFor(version: string) {
  const standIn = await TypesenseStandIn.start(version);
  standIns.push(standIn);
  // Answers like a server that found every stored document (the stand-in does not match words itself).
  standIn.answerSearch = (_search, collection) => ({
    found: collection.documents.size,
    hits: [...collection.documents.values()].map((document) => ({ document, highlight: {} })),
  });
  const check = () => checkTypesense(typesenseClient({ url: standIn.url, apiKey: STAND_IN_API_KEY }), standIn.url);
  return { standIn, check };
}

describe('typesense:check', () => {
  for (const version of ['30.0', '29.0']) {
    const v30 = version === '30.0';
    it(`reports Typesense ${version} as supported and round-trips a throwaway collection`, async () => {
      const { standIn, check } = await standInFor(version);
      const result = await check();
      expect(result).toMatchObject({ version, supported: true, ok: true });
      const name = standIn.requests.find((request) => request.path === '/collections')!.body as { name: string };
      const collection = name.name;
      expect(collection).toMatch(/^typesense_check_[0-9a-f]{8}$/);
      expect(result.lines).toEqual([
        `Typesense at ${standIn.url}`,
        `version: ${version}`,
        `supported: yes (this service speaks Typesense 29.x to 30.x; synonyms as ${
          v30 ? 'synonym-sets' : 'collection-synonyms'
        })`,
        `round trip in the throwaway collection ${collection}:`,
        `  created it with the synonyms sofa, couch (${v30 ? 'a synonym set' : 'collection synonyms'})`,
        '  imported one document',
        '  found it by a synonym',
        '  deleted it',
      ]);
      expect(standIn.lines()).toEqual([
        'GET /debug',
        ...(v30 ? [`PUT /synonym_sets/${collection}_synonyms`] : []),
        'POST /collections',
        ...(v30 ? [] : [`PUT /collections/${collection}/synonyms/check`]),
        `POST /collections/${collection}/documents/import`,
        'POST /multi_search',
        `DELETE /collections/${collection}`,
        ...(v30 ? [`DELETE /synonym_sets/${collection}_synonyms`] : []),
      ]);
      expect(standIn.requests.find((request) => request.path === '/multi_search')!.body).toEqual({
        searches: [{ collection, q: 'sofa', query_by: 'title' }],
      });
      expect(standIn.collections.size).toBe(0);
      expect(standIn.synonymSets.size).toBe(0);
    });
  }

  it('reports an unsupported server without touching it further', async () => {
    const { standIn, check } = await standInFor('28.0');
    const result = await check();
    expect(result).toMatchObject({ version: '28.0', supported: false, ok: false });
    expect(result.lines.at(-1)).toBe(
      'supported: no (Typesense server version 28.0 is not supported: this service speaks Typesense 29.x to 30.x. ' +
        'Upgrade the server, or leave TYPESENSE_URL unset to use the embedded engine.)',
    );
    expect(standIn.lines()).toEqual(['GET /debug']);
  });

  it('a failed round trip is reported, and the throwaway collection is deleted all the same', async () => {
    const { standIn, check } = await standInFor('30.0');
    standIn.answerSearch = () => ({ found: 0, hits: [] });
    const result = await check();
    expect(result.ok).toBe(false);
    expect(result.lines.at(-1)).toBe(
      'round trip failed: searching "sofa" did not find the document titled "Leather couch"',
    );
    expect(standIn.collections.size).toBe(0);
    expect(standIn.synonymSets.size).toBe(0);
  });

  it('runs as npm run typesense:check, exiting 0 for a supported server', async () => {
    const { standIn } = await standInFor('30.0');
    const { stdout } = await promisify(execFile)(join(root, 'node_modules/.bin/tsx'), ['scripts/typesense-check.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, TYPESENSE_URL: standIn.url, TYPESENSE_API_KEY: STAND_IN_API_KEY },
    });
    expect(stdout).toContain('version: 30.0\nsupported: yes');
    expect(stdout).toContain('  deleted it');
  });
});
