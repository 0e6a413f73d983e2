/** One difference between two versions of a contract, and what it means for clients built on the old one. */
export type Criticality = 'BREAKING' | 'DANGEROUS' | 'SAFE';

export interface Change {
  criticality: Criticality;
  /** Where: `POST /api/inventory/items: request body data[].sku`, `Query.products`. */
  location: string;
  message: string;
}

export const ORDER: Criticality[] = ['BREAKING', 'DANGEROUS', 'SAFE'];

/** One line per change, the breaking ones first. */
export function formatChanges(changes: Change[]): string[] {
  return [...changes]
    .sort((a, b) => ORDER.indexOf(a.criticality) - ORDER.indexOf(b.criticality))
    .map((change) => `${change.criticality.padEnd(9)} ${change.location}: ${change.message}`);
}
