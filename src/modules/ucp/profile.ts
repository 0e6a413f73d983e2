/** The UCP business profile of a proxy key's storefront catalog (`/.well-known/ucp`). */
import {
  UCP_LOOKUP_CAPABILITY,
  UCP_SEARCH_CAPABILITY,
  UCP_SHOPPING_SERVICE,
  UCP_VERSION,
  type UcpBusinessProfileData,
} from './ucp.schemas';

/** The specification's documents of the implemented draft are published under this path segment. */
const SPEC_SEGMENT = 'draft';
const specUrl = (path: string) => `https://ucp.dev/${SPEC_SEGMENT}/${path}`;

/** The profile naming both bindings (REST under `/ucp/{key}`, MCP at `/ucp/{key}/mcp`) and both capabilities. */
export function ucpProfile(baseUrl: string, key: string): UcpBusinessProfileData {
  const endpoint = `${baseUrl}/ucp/${encodeURIComponent(key)}`;
  const service = (transport: 'rest' | 'mcp', schema: string, url: string) => ({
    version: UCP_VERSION,
    spec: specUrl('specification/overview'),
    transport,
    schema: specUrl(schema),
    endpoint: url,
  });
  const capability = (name: 'search' | 'lookup', schema: string) => [
    {
      version: UCP_VERSION,
      spec: specUrl(`specification/shopping/catalog/${name}`),
      schema: specUrl(`schemas/shopping/${schema}`),
    },
  ];
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        [UCP_SHOPPING_SERVICE]: [
          service('rest', 'services/shopping/rest.openapi.json', endpoint),
          service('mcp', 'services/shopping/mcp.openrpc.json', `${endpoint}/mcp`),
        ],
      },
      capabilities: {
        [UCP_SEARCH_CAPABILITY]: capability('search', 'catalog_search.json'),
        [UCP_LOOKUP_CAPABILITY]: capability('lookup', 'catalog_lookup.json'),
      },
      payment_handlers: {},
    },
  };
}
