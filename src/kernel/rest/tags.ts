/**
 * The groups of the REST reference, in the order it shows them: what a tenant uses first, the
 * operator's Admin group (master key) last. Each operation names one (`RestOperation.tag`); a new
 * group is a line here, with the sentence the reference shows under its name.
 */
export const REST_TAGS = [
  {
    name: 'Edge proxies',
    description:
      'A proxy key maps paths to origins, with cache, signature and authentication settings; the data plane ' +
      'serves its traffic at `/edge/{key}/...`. Guide: [edge proxies and the data plane](/docs/guides/edge.md).',
  },
  {
    name: 'Search indexes',
    description:
      'Indexes, their documents, merchandising rules and analytics. ' +
      'Guide: [search and merchandising](/docs/guides/search.md).',
  },
  {
    name: 'Search',
    description:
      'Searching one index with a key, or through a proxy key as a shop front end does, with its settings, ' +
      'click measurement, events and query suggestions. Guide: [search and merchandising](/docs/guides/search.md).',
  },
  {
    name: 'Inventory',
    description:
      'Stock writes: add, count and remove inventory lines. Stock is read, and orders, reservations, transfers ' +
      'and supplies are kept, over GraphQL at [/graphql](/graphql). Guide: [stock](/docs/guides/stock.md).',
  },
  {
    name: 'Prices and tax',
    description:
      'Prices of products per currency and sales channel, written in bulk, and tax zones with their rates. ' +
      'Prices are read with the catalog over GraphQL (`Product.prices`). Guide: [selling](/docs/guides/selling.md).',
  },
  {
    name: 'Shipping',
    description:
      'Shipping methods of sales channels: destinations, flat or weight rates, free-above thresholds and pickup at ' +
      "the channel's warehouses. Guide: [selling](/docs/guides/selling.md#shipping).",
  },
  {
    name: 'Discounts',
    description:
      'Discount codes and automatic promotions: percent or fixed, off the order or off items, with a minimum ' +
      'subtotal, a validity window and usage limits. Guide: [selling](/docs/guides/selling.md#discounts).',
  },
  {
    name: 'Agents',
    description:
      "The index that is the tenant's catalog for AI agents (MCP and UCP). Guide: [agents](/docs/guides/agents.md).",
  },
  {
    name: 'Storefront catalog (UCP)',
    description:
      "A proxy key's public catalog in the shapes of the Universal Commerce Protocol, without a token. " +
      'Guide: [agents](/docs/guides/agents.md#the-storefront-catalog-per-proxy-key).',
  },
  {
    name: 'OAuth',
    description:
      'The authorization server: tokens, authorization sessions, revocation, introspection and the ' +
      "registration of agents' clients. Guide: [OAuth](/docs/guides/oauth.md).",
  },
  {
    name: 'Admin',
    description:
      "The operator's API, authorised by the master key: tenants, API keys, OAuth clients and users, signing " +
      'keys. Reference: [tenants, API keys and scopes](/docs/reference/scopes.md).',
  },
] as const;

export type RestTag = (typeof REST_TAGS)[number]['name'];
