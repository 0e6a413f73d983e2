/**
 * Filters read from the index's columns (field-columns.ts): each field filter is decided once per
 * distinct value a search meets and remembered, so that a slot costs a typed-array read. What a
 * filter means stays in filter-match.ts, which decides every value here.
 */
import type { EngineFilter, IndexedDocument } from './engine';
import { MISSING, type FieldColumns } from './field-columns';
import { isFieldFilter, passesFieldFilter } from './filter-match';

/** Whether the document in a slot passes. */
export type SlotFilter = (slot: number) => boolean;

const PASSES = 1;
const FAILS = 2;

function compile(filter: EngineFilter, documents: (IndexedDocument | undefined)[], columns: FieldColumns): SlotFilter {
  if (!isFieldFilter(filter)) {
    const members = ('any' in filter ? filter.any : filter.all).map((member) => compile(member, documents, columns));
    return 'any' in filter
      ? (slot) => members.some((member) => member(slot))
      : (slot) => members.every((member) => member(slot));
  }
  const { field } = filter;
  const { codes, values } = columns.of(documents, field);
  // Per value id: 0 until decided, then PASSES or FAILS.
  const decided = new Uint8Array(values.length);
  const missing = passesFieldFilter(undefined, filter);
  return (slot) => {
    const code = codes[slot]!;
    if (code >= 0) {
      let known = decided[code]!;
      if (known === 0) decided[code] = known = passesFieldFilter(values[code], filter) ? PASSES : FAILS;
      return known === PASSES;
    }
    if (code === MISSING) return missing;
    return passesFieldFilter(documents[slot]!.values[field], filter);
  };
}

/** A test of every filter over the documents' slots, for one search (the columns must not change meanwhile). */
export function slotFilter(
  filters: EngineFilter[],
  documents: (IndexedDocument | undefined)[],
  columns: FieldColumns,
): SlotFilter {
  const compiled = filters.map((filter) => compile(filter, documents, columns));
  if (compiled.length === 1) return compiled[0]!;
  return (slot) => {
    for (const test of compiled) if (!test(slot)) return false;
    return true;
  };
}
