import type { DbOrTx } from '../../kernel/db';
import { invalidField } from '../../kernel/validation';
import { isUuid } from '../../kernel/ids';
import * as catalog from './catalog.repository';

/**
 * A `location_id` where goods go in one warehouse: the warehouse itself (null: no position) or the
 * id of one of its positions; anything else is a VALIDATION_ERROR naming `location_id`.
 */
export async function positionInWarehouse(
  db: DbOrTx,
  tenantId: string,
  warehouseId: string,
  locationId: string | null | undefined,
): Promise<string | null> {
  if (locationId == null || locationId.toLowerCase() === warehouseId) return null;
  const position = isUuid(locationId) ? await catalog.findPosition(db, tenantId, locationId.toLowerCase()) : null;
  if (!position || position.warehouseId !== warehouseId)
    throw invalidField('location_id', `must be warehouse "${warehouseId}" or one of its positions`);
  return position.id;
}
