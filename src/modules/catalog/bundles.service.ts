import { writeTransaction, type Db, type DbOrTx } from '../../kernel/db';
import { conflict, notFound, type FieldProblem } from '../../kernel/errors';
import { isUuid } from '../../kernel/ids';
import { TransactionalEvent } from '../../kernel/transactional-event';
import { invalidInput } from '../../kernel/validation';
import type { Product as ProductRow } from '../../__generated__/prisma/client';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as bundles from './bundles.repository';
import * as repository from './catalog.repository';
import type { SetBundleComponentsInput } from './catalog.schemas';

/** A component of a bundle as GraphQL shows it. */
export interface BundleComponentView {
  product: ProductRow;
  quantity: number;
}

/** A bundle's new components, at every warehouse of the tenant. */
export interface BundleComponentsChange {
  tenantId: string;
  pairs: { productId: string; warehouseId: string }[];
}

/** Bundles (kits): products sold as a set of components, with no inventory lines of their own. */
export class BundleService {
  /**
   * Raised in the transaction that set a bundle's components, for what depends on a bundle's level
   * (the low-stock alerts of the broadcasts module rebase it: the next fall fires).
   */
  readonly componentsChanged = new TransactionalEvent<BundleComponentsChange>();

  constructor(private readonly db: Db) {}

  /**
   * Makes a product a bundle of `components` (replacing any it had), or a plain product again
   * with none. Refused for a product that is a component, a component that is a bundle or the
   * product itself, and a product with stock of its own (CONFLICT).
   */
  async setComponents(principal: Principal, input: SetBundleComponentsInput): Promise<ProductRow> {
    requireScope(principal, 'catalog:write');
    const { tenantId } = principal;
    const named = input.product_id ?? input.sku!;
    const productField = input.product_id != null ? 'product_id' : 'sku';
    return writeTransaction(this.db, async (tx) => {
      const [requested] =
        input.product_id != null
          ? isUuid(input.product_id)
            ? await repository.productsByIds(tx, tenantId, [input.product_id.toLowerCase()])
            : []
          : await repository.productsBySkus(tx, tenantId, [input.sku!]);
      // Writes that read this product's definition finish first; those after read the new one.
      if (requested) await bundles.lockDefinitions(tx, tenantId, [requested.id], true);
      const skus = input.components.map((component) => component.sku);
      const components = await repository.productsBySkus(tx, tenantId, [...new Set(skus)]);
      const locked = requested
        ? await bundles.lockProducts(tx, tenantId, [requested.id, ...components.map((product) => product.id)])
        : new Set<string>();
      if (!requested || !locked.has(requested.id)) {
        throw notFound(`no product ${productField === 'sku' ? 'with sku' : 'with id'} "${named}"`);
      }
      // Read again under the locks: a product may have become (or stopped being) a bundle meanwhile.
      const current = await repository.productsByIds(tx, tenantId, [...locked]);
      const bundle = current.find((product) => product.id === requested.id)!;
      const bySku = new Map(current.map((product) => [product.sku, product]));
      const problems: FieldProblem[] = [];
      if (input.components.length > 0 && (await bundles.isComponent(tx, tenantId, bundle.id))) {
        problems.push({
          field: `input.${productField}`,
          message: `"${named}" is a component of a bundle: a bundle cannot be inside a bundle`,
        });
      }
      input.components.forEach((component, index) => {
        const field = `input.components[${index}].sku`;
        const product = bySku.get(component.sku);
        if (skus.indexOf(component.sku) !== index)
          problems.push({ field, message: `"${component.sku}" appears more than once` });
        else if (!product) problems.push({ field, message: `"${component.sku}" is not a product of the tenant` });
        else if (product.id === bundle.id) problems.push({ field, message: 'a bundle cannot contain itself' });
        else if (product.isBundle)
          problems.push({ field, message: `"${component.sku}" is a bundle: a bundle cannot be inside a bundle` });
      });
      if (problems.length > 0) throw invalidInput(problems);
      if (input.components.length > 0 && !bundle.isBundle) {
        const references = await repository.stockReferences(tx, tenantId, 'product_id', bundle.id);
        if (references.lines || references.incoming) {
          throw conflict(
            `product "${bundle.sku}" has ${references.lines ? 'inventory lines' : 'announced stock'}: ` +
              'a bundle has no stock of its own; remove it first',
          );
        }
      }
      await bundles.replaceComponents(
        tx,
        tenantId,
        bundle.id,
        input.components.map((component) => ({
          componentId: bySku.get(component.sku)!.id,
          quantity: component.quantity,
        })),
      );
      const warehouseIds = await bundles.warehouseIdsOf(tx, tenantId);
      await this.componentsChanged.publish(tx, {
        tenantId,
        pairs: warehouseIds.map((warehouseId) => ({ productId: bundle.id, warehouseId })),
      });
      return (await repository.productsByIds(tx, tenantId, [bundle.id]))[0]!;
    });
  }

  /** The components of a bundle (none for another product), in the order last set. */
  async components(db: DbOrTx, tenantId: string, bundleId: string): Promise<BundleComponentView[]> {
    const rows = await bundles.componentsOf(db, tenantId, [bundleId]);
    const products = new Map(
      (
        await repository.productsByIds(
          db,
          tenantId,
          rows.map((row) => row.componentId),
        )
      ).map((product) => [product.id, product]),
    );
    return rows.map((row) => ({ product: products.get(row.componentId)!, quantity: Number(row.quantity) }));
  }

  /** The components of a product's bundle, for the GraphQL field. */
  componentsOfProduct = (tenantId: string, bundleId: string) => this.components(this.db, tenantId, bundleId);
}

/** Why a stock write refuses a bundle's SKU (its field problem's message). */
export const bundleHasNoStock = (sku: string) =>
  `"${sku}" is a bundle: it has no stock of its own; add, supply or transfer its components instead`;
