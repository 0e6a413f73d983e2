/**
 * The values of the index's fields by slot, one column per field, so that filtering, faceting and
 * sorting a million matches read typed arrays instead of each document's object. A column codes
 * each slot's value as the id of a distinct scalar, MISSING when the field has none, or MIXED when
 * it holds a point or several values, which are read from the document as before: every answer is
 * the one the document's values give.
 *
 * The index's documents are appended to and emptied, never replaced in place (a replaced document
 * gets a new slot), and a cleared index starts a new array; so a column built from an array stays
 * true for the slots it covers and is only extended by the slots added since.
 */
import type { FieldValue, IndexedDocument, Scalar } from './engine';

/** The slot's field has no value: missing, null or an empty array. */
export const MISSING = -1;
/** The slot's field holds a point, several values or -0: read it from the document. */
export const MIXED = -2;

export interface FieldColumn {
  /** Per slot: the id of its one value in `values`, MISSING or MIXED. */
  codes: Int32Array;
  /** The distinct scalar values by id, in the order first seen. */
  values: Scalar[];
  /** The id of each value, every element of a MIXED slot's array included. */
  ids: Map<Scalar, number>;
}

/** The code of a value, and its scalars given ids. */
function codeOf(column: FieldColumn, value: FieldValue | undefined): number {
  if (value === null || value === undefined) return MISSING;
  if (typeof value === 'object' && !Array.isArray(value)) return MIXED;
  if (Array.isArray(value)) {
    if (value.length === 0) return MISSING;
    for (const item of value) idOf(column, item);
    return value.length === 1 && !Object.is(value[0], -0) ? idOf(column, value[0]!) : MIXED;
  }
  // A -0 shares the id of 0 (as a Map's keys do) and is read from the document, so that it stays -0.
  const id = idOf(column, value);
  return Object.is(value, -0) ? MIXED : id;
}

function idOf(column: FieldColumn, scalar: Scalar): number {
  const value = Object.is(scalar, -0) ? 0 : scalar;
  let id = column.ids.get(value);
  if (id === undefined) {
    id = column.values.length;
    column.ids.set(value, id);
    column.values.push(value);
  }
  return id;
}

/** The columns of one index's documents, built field by field when first read. */
export class FieldColumns {
  private documents: (IndexedDocument | undefined)[] | null = null;
  private readonly columns = new Map<string, { column: FieldColumn; filled: number }>();

  /** The column of `field` over `documents`, extended by the slots added since it was last read. */
  of(documents: (IndexedDocument | undefined)[], field: string): FieldColumn {
    if (documents !== this.documents) {
      this.documents = documents;
      this.columns.clear();
    }
    let entry = this.columns.get(field);
    if (!entry) {
      entry = { column: { codes: new Int32Array(0), values: [], ids: new Map() }, filled: 0 };
      this.columns.set(field, entry);
    }
    const { column } = entry;
    if (entry.filled < documents.length) {
      if (column.codes.length < documents.length) {
        const codes = new Int32Array(Math.max(documents.length + (documents.length >> 2), 1024));
        codes.set(column.codes.subarray(0, entry.filled));
        column.codes = codes;
      }
      for (let slot = entry.filled; slot < documents.length; slot++)
        column.codes[slot] = codeOf(column, documents[slot]?.values[field]);
      entry.filled = documents.length;
    }
    return column;
  }
}
