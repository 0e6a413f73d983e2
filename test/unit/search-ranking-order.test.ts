import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IndexDefinition, IndexedDocument, Scalar, SortKey } from '../../src/modules/search/engine/engine';
import { DEFAULT_RANKING_RULES, valuesOf } from '../../src/modules/search/engine/engine';
import { FieldColumns } from '../../src/modules/search/engine/field-columns';
import { IdOrder } from '../../src/modules/search/engine/id-order';
import { rank } from '../../src/modules/search/engine/ranking';
import { indexDefinition } from '../helpers/search-definitions';

describe('IdOrder', () => {
  it('ranks the live slots by id after appends, emptied slots and a new array', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string({ maxLength: 3 }), { maxLength: 20 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (batches, emptied) => {
          const order = new IdOrder();
          const documents: (IndexedDocument | undefined)[] = [];
          for (const batch of batches) {
            // Ids are unique among live documents, as the index keeps them.
            for (const id of batch) {
              const previous = documents.findIndex((one) => one?.id === id);
              if (previous >= 0) documents[previous] = undefined;
              documents.push({ id, values: {}, metadata: null });
            }
            for (const at of emptied) if (documents.length > 0) documents[at % documents.length] = undefined;
            const ranks = order.of(documents);
            const live = documents.flatMap((one, slot) => (one ? [slot] : []));
            const byRank = [...live].sort((a, b) => ranks[a]! - ranks[b]!).map((slot) => documents[slot]!.id);
            expect(byRank).toEqual(live.map((slot) => documents[slot]!.id).sort());
            expect(new Set(live.map((slot) => ranks[slot])).size).toBe(live.length);
          }
          const fresh = [
            { id: 'b', values: {}, metadata: null },
            { id: 'a', values: {}, metadata: null },
          ];
          expect([...order.of(fresh).subarray(0, 2)]).toEqual([1, 0]);
        },
      ),
    );
  });
});

/** Sort values of every kind, the ones compared as they are included: NaN, Infinity, booleans, mixed types. */
const sortValue = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom<Scalar | undefined>(undefined, 0.5, -0, 2 ** 40, -(2 ** 60)),
  fc.constantFrom<Scalar>('a', 'b', 'B', ''),
  fc.constantFrom<Scalar>(true, false, NaN, Infinity),
);

const definition = (rules: IndexDefinition['rankingRules']): IndexDefinition =>
  indexDefinition({ alias: 'items', rankingRules: rules });

describe('rank', () => {
  it('orders as comparing each key in turn and then the ids does, whatever the keys hold', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            s: sortValue,
            t: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom<Scalar | undefined>(undefined, 'x', 1.5)),
            typos: fc.array(fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, fc.integer({ min: -1, max: 2 })), {
              minLength: 2,
              maxLength: 2,
            }),
            exact: fc.integer({ min: 0, max: 2 }),
            positions: fc.array(
              fc.oneof(
                { arbitrary: fc.constant(0), weight: 6 },
                { arbitrary: fc.integer({ min: 0, max: 2 ** 20 }), weight: 1 },
              ),
              {
                minLength: 3,
                maxLength: 3,
              },
            ),
          }),
          // More matches than the positional scores are computed for at a time.
          { minLength: 150, maxLength: 400 },
        ),
        fc.constantFrom<SortKey[]>(
          [],
          [{ field: 's', direction: 'asc' }],
          [
            { field: 's', direction: 'desc' },
            { field: 't', direction: 'asc' },
          ],
          [{ field: 't', direction: 'desc' }],
        ),
        fc.boolean(),
        fc.integer({ min: 0, max: 12 }),
        (rows, sort, words, needed) => {
          const documents: IndexedDocument[] = rows.map((row, i) => ({
            id: `d${(i * 7919) % 400}-${i}`,
            values: { ...(row.s === undefined ? {} : { s: row.s }), ...(row.t === undefined ? {} : { t: row.t }) },
            metadata: null,
          }));
          const slots = documents.map((_, slot) => slot).reverse();
          const typos = [0, 1].map((w) => Int8Array.from(rows.map((row) => row.typos[w]!)));
          const positionalOf = (of: number[]) => ({
            // As the index scores them: two words at least a word apart, exact only where no typo was needed.
            proximity: Int32Array.from(of.map((slot) => 1 + rows[slot]!.positions[0]!)),
            attribute: Int32Array.from(of.map((slot) => rows[slot]!.positions[1]!)),
            exactness: Int32Array.from(
              of.map((slot) => Math.min(rows[slot]!.exact, rows[slot]!.typos.filter((typo) => typo === 0).length)),
            ),
          });
          const positional = positionalOf(documents.map((_, slot) => slot));
          const ids = new IdOrder();
          const ranked = rank(
            {
              definition: definition([...DEFAULT_RANKING_RULES]),
              documents,
              slots,
              words: words ? ['a', 'b'] : [],
              typos,
              exactWords: [true, true],
              positional: positionalOf,
              idRanks: ids.of(documents),
              columns: new FieldColumns(),
            },
            sort,
            needed,
          );
          // The order by each key in turn, as the ranking rules define it.
          const keyOf = (slot: number): (Scalar | undefined)[] => {
            const keys: (Scalar | undefined)[] = sort.map((key) => valuesOf(documents[slot]!.values[key.field])[0]);
            if (words)
              keys.push(
                -typos.filter((of) => of[slot]! >= 0).length,
                typos.reduce((sum, of) => sum + Math.max(0, of[slot]!), 0),
                positional.proximity[slot],
                positional.attribute[slot],
                -positional.exactness[slot]!,
              );
            return keys;
          };
          const places = slots.map((_, place) => place);
          const expected = places
            .sort((a, b) => {
              const x = keyOf(slots[a]!);
              const y = keyOf(slots[b]!);
              for (let i = 0; i < x.length; i++) {
                if (x[i] === y[i]) continue;
                if (x[i] === undefined) return 1;
                if (y[i] === undefined) return -1;
                return (x[i]! < y[i]! ? -1 : 1) * (i < sort.length && sort[i]!.direction === 'desc' ? -1 : 1);
              }
              const [p, q] = [documents[slots[a]!]!.id, documents[slots[b]!]!.id];
              return p < q ? -1 : p > q ? 1 : 0;
            })
            .map((place) => slots[place]!);
          expect(ranked.count).toBe(slots.length);
          // A comparison that is no order (NaN, mixed types) may place documents differently, as before.
          const ordered =
            rows.every((row) => row.s === undefined || (typeof row.s === 'number' && Number.isFinite(row.s))) ||
            rows.every((row) => row.s === undefined || typeof row.s === 'string');
          if (ordered && rows.every((row) => typeof row.t !== 'string'))
            expect(ranked.slots).toEqual(expected.slice(0, needed));
        },
      ),
    );
  });
});

describe('rank with positional rules', () => {
  const count = 1000;
  const documents: IndexedDocument[] = Array.from({ length: count }, (_, i) => ({
    id: `d${String(i).padStart(4, '0')}`,
    values: {},
    metadata: null,
  }));
  const slots = documents.map((_, slot) => slot);
  const rankWith = (exactness: (slot: number) => number, exactWords = [true, true]) => {
    let computed = 0;
    const ranked = rank(
      {
        definition: definition([...DEFAULT_RANKING_RULES]),
        documents,
        slots,
        words: ['a', 'b'],
        typos: [new Int8Array(count), new Int8Array(count)],
        exactWords,
        positional: (of) => {
          computed += of.length;
          return {
            proximity: new Int32Array(of.length).fill(1),
            attribute: new Int32Array(of.length),
            exactness: Int32Array.from(of.map(exactness)),
          };
        },
        idRanks: new IdOrder().of(documents),
        columns: new FieldColumns(),
      },
      [],
      3,
    );
    return { ranked, computed };
  };

  it('finds the one better match however far down it is', () => {
    const { ranked, computed } = rankWith((slot) => (slot === 900 ? 2 : 1));
    expect(ranked.slots).toEqual([900, 0, 1]);
    expect(computed).toBe(count);
  });

  it('computes the positional scores only of matches that can still reach the first page', () => {
    const { ranked, computed } = rankWith(() => 2);
    expect(ranked).toEqual({ slots: [0, 1, 2], count });
    expect(computed).toBeLessThan(count);
    // A word that no document word matches exactly (a prefix, a typo) is exact nowhere.
    const prefix = rankWith(() => 1, [true, false]);
    expect(prefix.ranked).toEqual({ slots: [0, 1, 2], count });
    expect(prefix.computed).toBeLessThan(count);
  });
});
