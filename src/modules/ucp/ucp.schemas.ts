/**
 * The Universal Commerce Protocol (UCP) catalog capability, as zod: requests and responses of
 * `search_catalog`, `lookup_catalog` and `get_product`, and the business profile. Written from the
 * JSON Schemas under `source/schemas/` of the specification (see `UCP_VERSION`). Objects stay open
 * (`looseObject`) where the specification leaves them open, so a response the specification allows
 * is never refused; the limits on requests are ours and documented with each field.
 */
import { z } from '../../kernel/rest/schemas';

/**
 * The UCP version implemented: the specification's draft at commit fdcf8934 (2026-08-22), which
 * follows the 2026-04-08 release. UCP dates a draft by the day it is published, so it is named by
 * that commit's date.
 */
export const UCP_VERSION = '2026-08-22';
export const UCP_SEARCH_CAPABILITY = 'dev.ucp.shopping.catalog.search';
export const UCP_LOOKUP_CAPABILITY = 'dev.ucp.shopping.catalog.lookup';
export const UCP_SHOPPING_SERVICE = 'dev.ucp.shopping';

/** Our limits on requests (the specification leaves them to the business). */
export const MAX_QUERY_LENGTH = 512;
export const DEFAULT_PAGE_LIMIT = 10;
/** Larger page sizes are clamped to this silently, as the specification allows. */
export const MAX_PAGE_LIMIT = 50;
/** A lookup naming more identifiers is refused (`request_too_large` / -32602), as the specification says. */
export const MAX_LOOKUP_IDS = 100;
export const MAX_IDENTIFIER_LENGTH = 200;
export const MAX_CATEGORY_FILTERS = 50;

const Version = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD version');
const ReverseDomainName = z
  .string()
  .regex(/^[a-z](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9_-]*[a-z0-9_])?)+$/, 'must be a reverse domain name');

/** Minor units of the currency (ISO 4217), as `amount.json` defines them. */
export const UcpAmount = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
export const UcpPrice = z.looseObject({ amount: UcpAmount, currency: z.string().regex(/^[A-Z]{3}$/) });
export const UcpPriceRange = z.looseObject({ min: UcpPrice, max: UcpPrice });
export const UcpDescription = z
  .looseObject({ plain: z.string().optional(), html: z.string().optional(), markdown: z.string().optional() })
  .refine((value) => Object.keys(value).length > 0, 'must have at least one property');
const Category = z.looseObject({ value: z.string(), taxonomy: z.string().optional() });
const Media = z.looseObject({
  type: z.string(),
  url: z.url(),
  alt_text: z.string().optional(),
  width: z.int().min(1).optional(),
  height: z.int().min(1).optional(),
});
const OptionValue = z.looseObject({ id: z.string().optional(), label: z.string() });
const ProductOption = z.looseObject({ name: z.string(), values: z.array(OptionValue).min(1) });
export const UcpSelectedOption = z.looseObject({ name: z.string(), id: z.string().optional(), label: z.string() });
const Rating = z.looseObject({
  value: z.number().min(0),
  scale_min: z.number().min(0).optional(),
  scale_max: z.number().min(1),
  count: z.int().min(0).optional(),
});
export const UcpAvailability = z.looseObject({ available: z.boolean().optional(), status: z.string().optional() });
const Link = z.looseObject({ type: z.string(), url: z.url() });

export const UcpVariant = z.looseObject({
  id: z.string(),
  sku: z.string().optional(),
  barcodes: z.array(z.looseObject({ type: z.string(), value: z.string() })).optional(),
  handle: z.string().optional(),
  title: z.string(),
  description: UcpDescription,
  url: z.url().optional(),
  categories: z.array(Category).optional(),
  price: UcpPrice,
  list_price: UcpPrice.optional(),
  availability: UcpAvailability.optional(),
  options: z.array(UcpSelectedOption).optional(),
  media: z.array(Media).optional(),
  rating: Rating.optional(),
  tags: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  seller: z.looseObject({ name: z.string().optional(), links: z.array(Link).optional() }).optional(),
});

const productShape = {
  id: z.string(),
  handle: z.string().optional(),
  title: z.string(),
  description: UcpDescription,
  url: z.url().optional(),
  categories: z.array(Category).optional(),
  price_range: UcpPriceRange,
  list_price_range: UcpPriceRange.optional(),
  media: z.array(Media).optional(),
  options: z.array(ProductOption).optional(),
  variants: z.array(UcpVariant).min(1),
  rating: Rating.optional(),
  tags: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
};
export const UcpProduct = z.looseObject(productShape);

const InputCorrelation = z.looseObject({ id: z.string(), match: z.string().optional() });
/** A variant of a lookup response names the request identifiers that resolved to it. */
export const UcpLookupVariant = UcpVariant.extend({ inputs: z.array(InputCorrelation).min(1) });
export const UcpLookupProduct = z.looseObject({ ...productShape, variants: z.array(UcpLookupVariant).min(1) });

const DetailOptionValue = OptionValue.extend({ available: z.boolean().optional(), exists: z.boolean().optional() });
export const UcpDetailProduct = z.looseObject({
  ...productShape,
  selected: z.array(UcpSelectedOption).optional(),
  options: z.array(z.looseObject({ name: z.string(), values: z.array(DetailOptionValue).min(1) })).optional(),
});

const ContentType = z.enum(['plain', 'markdown']);
const MessageError = z.looseObject({
  type: z.literal('error'),
  code: z.string(),
  path: z.string().optional(),
  content_type: ContentType.optional(),
  content: z.string(),
  severity: z.enum(['recoverable', 'requires_buyer_input', 'requires_buyer_review', 'unrecoverable']),
});
const MessageWarning = z.looseObject({
  type: z.literal('warning'),
  code: z.string(),
  path: z.string().optional(),
  content: z.string(),
  content_type: ContentType.optional(),
  presentation: z.string().optional(),
  image_url: z.url().optional(),
  url: z.url().optional(),
});
const MessageInfo = z.looseObject({
  type: z.literal('info'),
  code: z.string().optional(),
  path: z.string().optional(),
  content_type: ContentType.optional(),
  content: z.string(),
});
export const UcpMessage = z.discriminatedUnion('type', [MessageError, MessageWarning, MessageInfo]);
export type UcpMessageData = z.output<typeof UcpMessage>;

const Entity = z.looseObject({
  version: Version,
  spec: z.url().optional(),
  schema: z.url().optional(),
  id: z.string().optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});
const Service = Entity.extend({
  transport: z.enum(['rest', 'mcp', 'a2a', 'embedded']),
  endpoint: z.url().optional(),
});
const entityMap = <T extends z.ZodType>(item: T) => z.record(ReverseDomainName, z.array(item));

/** The `ucp` block of a catalog response (`ucp.json#/$defs/response_catalog_schema`). */
export const UcpResponseMetadata = z.looseObject({
  version: Version,
  map_order: z.record(z.string(), z.array(z.string())).optional(),
  status: z.enum(['success', 'error']).optional(),
  services: entityMap(Service).optional(),
  capabilities: entityMap(Entity.extend({ extends: z.unknown().optional() })).optional(),
  payment_handlers: entityMap(Entity).optional(),
});

const Pagination = z
  .looseObject({
    cursor: z.string().optional(),
    has_next_page: z.boolean(),
    total_count: z.int().min(0).optional(),
  })
  .refine((page) => !page.has_next_page || page.cursor !== undefined, {
    message: 'a page followed by another must carry its cursor',
    path: ['cursor'],
  });

const responseTail = {
  actions: z.record(z.string(), z.unknown()).optional(),
  messages: z.array(UcpMessage).optional(),
  policies: z.array(z.record(z.string(), z.unknown())).optional(),
};

export const UcpSearchResponse = z.looseObject({
  ucp: UcpResponseMetadata,
  products: z.array(UcpProduct),
  pagination: Pagination.optional(),
  ...responseTail,
});
export const UcpLookupResponse = z.looseObject({
  ucp: UcpResponseMetadata,
  products: z.array(UcpLookupProduct),
  ...responseTail,
});
export const UcpGetProductResponse = z.looseObject({
  ucp: UcpResponseMetadata,
  product: UcpDetailProduct,
  ...responseTail,
});
/** `common/types/error_response.json`: `ucp.status` is `error`, at least one message. */
export const UcpErrorResponse = z
  .object({
    ucp: UcpResponseMetadata.refine((ucp) => ucp.status === 'error', 'status must be "error"'),
    messages: z.array(UcpMessage).min(1),
    continue_url: z.url().optional(),
  })
  .strict();
export const UcpGetProductResult = z.union([UcpGetProductResponse, UcpErrorResponse]);
/**
 * `get_product`'s result as one object (an MCP output schema is an object): a product, or
 * `ucp.status: "error"` with messages. `UcpGetProductResult` tells the two apart.
 */
export const UcpGetProductOutput = z.looseObject({
  ucp: UcpResponseMetadata,
  product: UcpDetailProduct.optional(),
  ...responseTail,
});

export type UcpProductData = z.output<typeof UcpProduct>;
export type UcpSearchResponseData = z.output<typeof UcpSearchResponse>;
export type UcpLookupResponseData = z.output<typeof UcpLookupResponse>;
export type UcpGetProductResultData = z.output<typeof UcpGetProductResult>;

/** The business profile served at `/.well-known/ucp` (`profile.json#/$defs/business_schema`). */
export const UcpBusinessProfile = z.looseObject({
  ucp: UcpResponseMetadata.extend({
    supported_versions: z.record(Version, z.url()).optional(),
    services: entityMap(
      Service.refine((service) => service.transport === 'embedded' || !!service.endpoint, 'needs an endpoint'),
    ),
    capabilities: entityMap(Entity.extend({ schema: z.url() })).optional(),
    payment_handlers: entityMap(Entity),
  }),
  keys: z.array(z.looseObject({ kid: z.string(), kty: z.string() })).optional(),
});
export type UcpBusinessProfileData = z.output<typeof UcpBusinessProfile>;
