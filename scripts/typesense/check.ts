/**
 * What `npm run typesense:check` finds out about a Typesense server: its version, whether this
 * service supports it, and whether a small round trip works there (a throwaway collection with a
 * synonym, one document, one search; deleted again whatever happens).
 */
import { randomBytes } from 'node:crypto';
import type { Client } from 'typesense';
import {
  protocolFor,
  SUPPORTED_MAJOR_VERSIONS,
  type TypesenseProtocol,
} from '../../src/modules/search/engine/typesense-version';

export interface TypesenseCheck {
  /** What the server reported, or null when it could not be asked. */
  version: string | null;
  supported: boolean;
  /** One line per step, in order. */
  lines: string[];
  ok: boolean;
}

const { oldest, newest } = SUPPORTED_MAJOR_VERSIONS;
const SUPPORTED = `this service speaks Typesense ${oldest}.x to ${newest}.x`;

export async function checkTypesense(client: Client, url: string): Promise<TypesenseCheck> {
  const lines = [`Typesense at ${url}`];
  let version: string;
  try {
    version = String(((await client.debug.retrieve()) as { version?: unknown }).version ?? 'unknown');
  } catch (error) {
    lines.push(`cannot read the server version (GET /debug): ${(error as Error).message}`);
    return { version: null, supported: false, lines, ok: false };
  }
  lines.push(`version: ${version}`);
  let protocol: TypesenseProtocol;
  try {
    protocol = protocolFor(version);
  } catch (error) {
    lines.push(`supported: no (${(error as Error).message})`);
    return { version, supported: false, lines, ok: false };
  }
  lines.push(`supported: yes (${SUPPORTED}; synonyms as ${protocol.synonyms})`);
  try {
    lines.push(...(await roundTrip(client, protocol)));
    return { version, supported: true, lines, ok: true };
  } catch (error) {
    lines.push(`round trip failed: ${(error as Error).message}`);
    return { version, supported: true, lines, ok: false };
  }
}

/** Creates, fills and searches a throwaway collection, finding a document through a synonym. */
async function roundTrip(client: Client, protocol: TypesenseProtocol): Promise<string[]> {
  const name = `typesense_check_${randomBytes(4).toString('hex')}`;
  const synonymSet = `${name}_synonyms`;
  const synonym = { synonyms: ['sofa', 'couch'] };
  const sets = protocol.synonyms === 'synonym-sets';
  const lines = [`round trip in the throwaway collection ${name}:`];
  try {
    if (sets) await client.synonymSets(synonymSet).upsert({ items: [{ id: 'check', ...synonym }] });
    await client.collections().create({
      name,
      fields: [{ name: 'title', type: 'string' }],
      ...(sets ? { synonym_sets: [synonymSet] } : {}),
    });
    if (!sets) await client.apiCall.put(`/collections/${name}/synonyms/check`, synonym);
    lines.push(`  created it with the synonyms sofa, couch (${sets ? 'a synonym set' : 'collection synonyms'})`);
    await client
      .collections(name)
      .documents()
      .import([{ id: 'check-1', title: 'Leather couch' }], { action: 'upsert' });
    lines.push('  imported one document');
    const { results } = (await client.multiSearch.perform({
      searches: [{ collection: name, q: 'sofa', query_by: 'title' }],
    } as never)) as unknown as { results: { found?: number; error?: string; hits?: { document: { id: string } }[] }[] };
    const [result] = results;
    if (result?.error !== undefined) throw new Error(`the search was refused: ${result.error}`);
    if (!result?.hits?.some((hit) => hit.document.id === 'check-1')) {
      throw new Error('searching "sofa" did not find the document titled "Leather couch"');
    }
    lines.push('  found it by a synonym');
  } finally {
    await client
      .collections(name)
      .delete()
      .catch(() => undefined);
    if (sets)
      await client
        .synonymSets(synonymSet)
        .delete()
        .catch(() => undefined);
  }
  lines.push('  deleted it');
  return lines;
}
