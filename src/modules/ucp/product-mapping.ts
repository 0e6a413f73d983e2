/**
 * How a document of the catalog index reads as a UCP product: one document is one product with
 * one variant, whose id is the document's SKU. A document without a product id, SKU, title, price
 * (a number, not negative) or currency is not a product and is left out of responses.
 */
import type { CatalogMappingData } from './catalog-settings.schemas';
import type { UcpProductData } from './ucp.schemas';

type Document = Record<string, unknown>;

const CURRENCY = /^[A-Z]{3}$/;

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The product id and SKU of a document, or null when it has not both. */
export function documentIdentity(mapping: CatalogMappingData, document: Document) {
  const productId = text(document[mapping.product_id]);
  const sku = text(document[mapping.sku]);
  return productId !== undefined && sku !== undefined ? { productId, sku } : null;
}

/** The price in minor units: the field's value times 10^`price_scale`, rounded to a whole unit. */
export function minorUnits(mapping: CatalogMappingData, value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number < 0) return undefined;
  const amount = Math.round(number * 10 ** mapping.price_scale);
  return Number.isSafeInteger(amount) ? amount : undefined;
}

function categoriesOf(value: unknown): { value: string }[] {
  const values = Array.isArray(value) ? value : [value];
  return values.flatMap((entry) => {
    const name = text(entry);
    return name === undefined ? [] : [{ value: name }];
  });
}

/** The UCP product of one document, its variant available when its SKU is among `availableSkus`. */
export function productOfHit(
  mapping: CatalogMappingData,
  document: Document,
  availableSkus: ReadonlySet<string>,
): UcpProductData | null {
  const identity = documentIdentity(mapping, document);
  const title = text(document[mapping.title]);
  const amount = minorUnits(mapping, document[mapping.price]);
  const ownCurrency = mapping.currency_field ? document[mapping.currency_field] : undefined;
  const currency = typeof ownCurrency === 'string' && CURRENCY.test(ownCurrency) ? ownCurrency : mapping.currency;
  if (!identity || title === undefined || amount === undefined || !currency) return null;
  const price = { amount, currency };
  const description = { plain: (mapping.description && text(document[mapping.description])) || '' };
  const url = mapping.url ? httpUrl(document[mapping.url]) : undefined;
  const image = mapping.image_url ? httpUrl(document[mapping.image_url]) : undefined;
  const categories = mapping.categories ? categoriesOf(document[mapping.categories]) : [];
  return {
    id: identity.productId,
    title,
    description,
    ...(url ? { url } : {}),
    ...(categories.length > 0 ? { categories } : {}),
    price_range: { min: price, max: price },
    ...(image ? { media: [{ type: 'image', url: image, alt_text: title }] } : {}),
    variants: [
      {
        id: identity.sku,
        sku: identity.sku,
        title,
        description,
        ...(url ? { url } : {}),
        price,
        availability: { available: availableSkus.has(identity.sku) },
      },
    ],
  };
}
