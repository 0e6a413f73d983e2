/**
 * The UCP catalog schemas against the specification's own examples (copied into
 * `test/fixtures/ucp/`, each naming its source and commit on its first line), and the shapes they
 * must refuse.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { encodeCursor } from '../../src/modules/ucp/catalog-cursor';
import {
  GetProductArguments,
  LookupCatalogArguments,
  SearchCatalogArguments,
  UcpGetProductRequest,
  UcpLookupRequest,
  UcpSearchRequest,
} from '../../src/modules/ucp/ucp-requests.schemas';
import {
  MAX_LOOKUP_IDS,
  UcpBusinessProfile,
  UcpErrorResponse,
  UcpGetProductOutput,
  UcpGetProductResponse,
  UcpGetProductResult,
  UcpLookupResponse,
  UcpSearchResponse,
} from '../../src/modules/ucp/ucp.schemas';

const FIXTURES = join(__dirname, '../fixtures/ucp');

/** A fixture without its source line. */
function fixture(name: string): Record<string, unknown> {
  const [source, ...json] = readFileSync(join(FIXTURES, name), 'utf8').split('\n');
  expect(source).toMatch(/^\/\/ source: \S+.*ucp@[0-9a-f]{40}/);
  return JSON.parse(json.join('\n'));
}

/** Which schema each example is of: the `ucp:example` attributes of the documentation, or the scaffold's name. */
const EXAMPLES: Record<string, z.ZodType> = {
  'index-1.jsonc': UcpGetProductResponse,
  'index-2.jsonc': UcpSearchResponse,
  'index-3.jsonc': UcpSearchResponse,
  'index-4.jsonc': UcpSearchResponse,
  'index-5.jsonc': UcpLookupResponse,
  'index-6.jsonc': UcpSearchResponse,
  'rest-1.jsonc': UcpBusinessProfile,
  'rest-2.jsonc': UcpSearchRequest,
  'rest-3.jsonc': UcpSearchResponse,
  'rest-4.jsonc': UcpLookupRequest,
  'rest-5.jsonc': UcpLookupResponse,
  'rest-6.jsonc': UcpLookupRequest,
  'rest-8.jsonc': UcpGetProductRequest,
  'rest-9.jsonc': UcpGetProductResponse,
  'rest-10.jsonc': UcpErrorResponse,
  'rest-11.jsonc': UcpLookupResponse,
  'mcp-1.jsonc': UcpBusinessProfile,
  'mcp-2.jsonc': UcpSearchRequest,
  'mcp-3.jsonc': UcpSearchRequest,
  'mcp-4.jsonc': UcpSearchResponse,
  'mcp-5.jsonc': UcpLookupRequest,
  'mcp-6.jsonc': UcpLookupResponse,
  'mcp-8.jsonc': UcpGetProductRequest,
  'mcp-9.jsonc': UcpGetProductResponse,
  'mcp-10.jsonc': UcpErrorResponse,
  'mcp-11.jsonc': UcpLookupResponse,
  'scaffold-shopping_catalog_search_request.jsonc': UcpSearchRequest,
  'scaffold-shopping_catalog_search_response.jsonc': UcpSearchResponse,
  'scaffold-shopping_catalog_lookup_request.jsonc': UcpLookupRequest,
  'scaffold-shopping_catalog_lookup_response.jsonc': UcpLookupResponse,
  'scaffold-shopping_catalog_lookup_request_get_product.jsonc': UcpGetProductRequest,
  'scaffold-shopping_catalog_lookup_response_get_product.jsonc': UcpGetProductResponse,
  'scaffold-profile_response.jsonc': UcpBusinessProfile,
};

describe("the specification's examples", () => {
  it('names a schema for every fixture', () => {
    expect(readdirSync(FIXTURES).sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  it.each(Object.entries(EXAMPLES))('%s parses', (name, schema) => {
    const parsed = schema.safeParse(fixture(name));
    expect(parsed.error?.issues).toBeUndefined();
  });

  it('parses get_product outcomes both as the union and as the one-object output', () => {
    for (const name of ['rest-9.jsonc', 'rest-10.jsonc']) {
      expect(UcpGetProductResult.safeParse(fixture(name)).success).toBe(true);
      expect(UcpGetProductOutput.safeParse(fixture(name)).success).toBe(true);
    }
  });

  it('parses the MCP arguments with their meta', () => {
    const meta = { 'ucp-agent': { profile: 'https://platform.example/profiles/v2026-01/shopping-agent.json' } };
    expect(SearchCatalogArguments.safeParse({ meta, catalog: fixture('mcp-3.jsonc') }).success).toBe(true);
    expect(LookupCatalogArguments.safeParse({ meta, catalog: fixture('mcp-5.jsonc') }).success).toBe(true);
    expect(GetProductArguments.safeParse({ meta, catalog: fixture('mcp-8.jsonc') }).success).toBe(true);
  });
});

/** A copy of `value` changed by `edit`. */
function edited<T>(value: T, edit: (copy: any) => void): T {
  const copy = structuredClone(value);
  edit(copy);
  return copy;
}

describe('wrong shapes', () => {
  const search = fixture('rest-3.jsonc');
  const lookup = fixture('rest-5.jsonc');

  it.each([
    ['a price in major units', (r: any) => (r.products[0].variants[0].price.amount = 120.5)],
    ['a negative amount', (r: any) => (r.products[0].price_range.min.amount = -1)],
    ['a lower-case currency', (r: any) => (r.products[0].variants[0].price.currency = 'usd')],
    ['a product without variants', (r: any) => (r.products[0].variants = [])],
    ['a product without price_range', (r: any) => delete r.products[0].price_range],
    ['an empty description', (r: any) => (r.products[0].description = {})],
    ['a next page without its cursor', (r: any) => delete r.pagination.cursor],
    ['a version not a date', (r: any) => (r.ucp.version = 'draft')],
    ['availability not a boolean', (r: any) => (r.products[0].variants[0].availability.available = 'yes')],
    ['no ucp block', (r: any) => delete r.ucp],
  ])('a search response with %s is refused', (_, edit) => {
    expect(UcpSearchResponse.safeParse(edited(search, edit)).success).toBe(false);
  });

  it('refuses a lookup variant without inputs, and an error message without severity', () => {
    expect(UcpLookupResponse.safeParse(edited(lookup, (r) => delete r.products[0].variants[0].inputs)).success).toBe(
      false,
    );
    const error = fixture('rest-10.jsonc');
    expect(UcpErrorResponse.safeParse(edited(error, (r) => delete r.messages[0].severity)).success).toBe(false);
    expect(UcpErrorResponse.safeParse(edited(error, (r) => (r.ucp.status = 'success'))).success).toBe(false);
    expect(UcpErrorResponse.safeParse(edited(error, (r) => (r.messages = []))).success).toBe(false);
  });

  it('refuses a profile service without an endpoint and one without payment handlers', () => {
    const profile = fixture('rest-1.jsonc');
    expect(
      UcpBusinessProfile.safeParse(edited(profile, (p) => delete p.ucp.services['dev.ucp.shopping'][0].endpoint))
        .success,
    ).toBe(false);
    expect(UcpBusinessProfile.safeParse(edited(profile, (p) => delete p.ucp.payment_handlers)).success).toBe(false);
  });

  it('refuses requests outside our limits and MCP calls without ucp-agent', () => {
    expect(UcpSearchRequest.safeParse({}).success).toBe(false);
    expect(UcpSearchRequest.safeParse({ query: '   ' }).success).toBe(false);
    expect(UcpSearchRequest.safeParse({ query: 'x'.repeat(513) }).success).toBe(false);
    expect(UcpSearchRequest.safeParse({ query: 'shoes', pagination: { cursor: 'eyJwYWdlIjoxfQ==' } }).success).toBe(
      false,
    );
    expect(UcpSearchRequest.safeParse({ query: 'shoes', pagination: { cursor: encodeCursor(20)! } }).success).toBe(
      true,
    );
    expect(UcpSearchRequest.safeParse({ filters: { price: { min: 1.5 } } }).success).toBe(false);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `id${i}`);
    expect(UcpLookupRequest.safeParse({ ids: ids(MAX_LOOKUP_IDS) }).success).toBe(true);
    expect(UcpLookupRequest.safeParse({ ids: ids(MAX_LOOKUP_IDS + 1) }).success).toBe(false);
    expect(UcpLookupRequest.safeParse({ ids: [] }).success).toBe(false);
    expect(SearchCatalogArguments.safeParse({ catalog: { query: 'shoes' } }).success).toBe(false);
    expect(SearchCatalogArguments.safeParse({ meta: { 'ucp-agent': {} }, catalog: { query: 'shoes' } }).success).toBe(
      false,
    );
  });
});
