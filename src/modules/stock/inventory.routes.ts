import { IdempotencyHeaders, idempotencyOf } from '../../kernel/rest/idempotency-header';
import { badRequest } from '../../kernel/errors';
import { underField } from '../../kernel/validation';
import { defineOperation } from '../context';
import { z } from '../../kernel/rest/schemas';
import {
  InventoryItemCreate,
  InventoryItemsEnvelope,
  InventoryItemUpdate,
  MAX_IDS_PER_DELETE,
  MAX_ITEMS_PER_WRITE,
} from './inventory.schemas';

const tag = 'Inventory';
const path = '/api/inventory/items';

const limitNote = `At most ${MAX_ITEMS_PER_WRITE} entries per request (and a body of at most 1 MiB, else 413).`;

export const addInventoryItems = defineOperation({
  operationId: 'addInventoryItems',
  method: 'post',
  path,
  summary: 'Add stock',
  description:
    'Registers stock that has no operation behind it (an opening balance, a found item). Every entry is validated ' +
    'first (known SKU, warehouse and business of the tenant, the warehouse belonging to the business, a known ' +
    'position code of the warehouse, BROKEN only with UNAVAILABLE); then all entries are added, or none. Entries ' +
    'with the same SKU, warehouse, position, batch number, serial number, expiry, state and reason add to one line, ' +
    'as does an existing line with those values; the other fields of such a line take the values last given. Each ' +
    `changed line gets one REGISTER stock mutation. Returns the resulting lines, each once, in the order of the ` +
    `entries. ` +
    `A 409 when a SKU whose item preference restricts it to a single position would get a second one. ${limitNote}`,
  tag,
  security: 'bearer',
  scopes: ['inventory:write'],
  headers: IdempotencyHeaders,
  body: z.object({ data: z.array(InventoryItemCreate).min(1).max(MAX_ITEMS_PER_WRITE) }).strict(),
  responses: { 201: { description: 'The lines the entries were added to.', schema: InventoryItemsEnvelope } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'CONFLICT', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `POST ${path}`, body);
    const lines = await underField('body.data', () => services.stock.addItems(principal, body.data, idempotency));
    return { status: 201, body: { data: lines, page: null, meta: null } };
  },
});

export const correctInventoryItems = defineOperation({
  operationId: 'correctInventoryItems',
  method: 'patch',
  path,
  summary: 'Correct stock',
  description:
    'Corrects lines, all or none, entries applied in order. Each entry names a line by `id`; every other field given ' +
    "replaces the line's value: `quantity` is the counted quantity, `position` moves the line (null: to no " +
    'position), `state` AVAILABLE clears the reason, null clears an optional field. A line whose values then equal ' +
    "another line's is merged into that line (quantities added, the moved line's id disappears). Each entry writes " +
    'one CORRECTION stock mutation. Succeeds with **200** and the resulting lines, each once, in the order of the ' +
    `entries. An unknown id is a 404 and nothing is applied. A move giving a SKU restricted to a single position ` +
    `(item ` +
    `preference) a second one is a 409. ${limitNote}`,
  tag,
  security: 'bearer',
  scopes: ['inventory:write'],
  headers: IdempotencyHeaders,
  body: z.object({ data: z.array(InventoryItemUpdate).min(1).max(MAX_ITEMS_PER_WRITE) }).strict(),
  responses: { 200: { description: 'The corrected lines.', schema: InventoryItemsEnvelope } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `PATCH ${path}`, body);
    const lines = await underField('body.data', () => services.stock.updateItems(principal, body.data, idempotency));
    return { status: 200, body: { data: lines, page: null, meta: null } };
  },
});

export const removeInventoryItems = defineOperation({
  operationId: 'removeInventoryItems',
  method: 'delete',
  path,
  summary: 'Remove lines',
  description:
    'Removes whole lines that should not exist (to set a quantity to zero, PATCH it). Give exactly one of ' +
    '`filter[id][eq]` and `filter[id][in]`. All named lines are removed, or none: an unknown id is a 404. Each ' +
    'removed ' +
    'line writes one CORRECTION stock mutation with its quantity taken off. Succeeds with **204** and no body.',
  tag,
  security: 'bearer',
  scopes: ['inventory:write'],
  query: z
    .object({
      'filter[id][eq]': z.string().min(1).max(64).optional().openapi({ description: 'Id of one line.' }),
      'filter[id][in]': z
        .string()
        .min(1)
        .max(MAX_IDS_PER_DELETE * 37)
        .optional()
        .openapi({ description: `Comma-separated ids of up to ${MAX_IDS_PER_DELETE} lines.` }),
    })
    .strict(),
  responses: { 204: { description: 'Removed.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ query, principal, services }) {
    const eq = query['filter[id][eq]'];
    const inList = query['filter[id][in]'];
    const problem = (field: string, message: string) => badRequest(`${field} ${message}`, [{ field, message }]);
    if (eq === undefined && inList === undefined)
      throw problem('query.filter[id]', 'is required: give filter[id][eq] or filter[id][in]');
    if (eq !== undefined && inList !== undefined)
      throw problem('query.filter[id]', 'takes filter[id][eq] or filter[id][in], not both');
    const ids = eq !== undefined ? [eq] : inList!.split(',').map((id) => id.trim());
    if (ids.some((id) => id === '')) throw problem('query.filter[id][in]', 'has an empty id');
    if (ids.length > MAX_IDS_PER_DELETE)
      throw problem('query.filter[id][in]', `names more than ${MAX_IDS_PER_DELETE} ids`);
    await services.stock.removeItems(principal, ids);
    return { status: 204 };
  },
});

export const inventoryOperations = [addInventoryItems, correctInventoryItems, removeInventoryItems];
