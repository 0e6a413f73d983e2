/** Request and response shapes of range facets: named ranges of a NUMBER facet field, counted. */
import { z } from '../../kernel/rest/schemas';

export const MAX_RANGE_FACET_FIELDS = 10;
export const MAX_RANGES_PER_FIELD = 20;

const Bound = z.number().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

const RangeInput = z
  .object({
    label: z.string().trim().min(1).max(100),
    from: Bound.nullable()
      .optional()
      .openapi({ description: 'Lowest value in the range (included); only the first range may leave it out.' }),
    to: Bound.nullable()
      .optional()
      .openapi({ description: 'Value where the range ends (not included); only the last range may leave it out.' }),
  })
  .strict()
  .openapi('SearchFacetRange');

export const FacetRangesInput = z
  .record(z.string().min(1).max(100), z.array(RangeInput).min(1).max(MAX_RANGES_PER_FIELD))
  .superRefine((fields, context) => {
    const names = Object.keys(fields);
    if (names.length > MAX_RANGE_FACET_FIELDS)
      context.addIssue({ code: 'custom', message: `must name at most ${MAX_RANGE_FACET_FIELDS} fields` });
    for (const name of names.slice(0, MAX_RANGE_FACET_FIELDS)) {
      const ranges = fields[name]!;
      const labels = new Set<string>();
      ranges.forEach((range, i) => {
        const at = (key?: string) => (key ? [name, i, key] : [name, i]);
        if (labels.has(range.label))
          context.addIssue({ code: 'custom', path: at('label'), message: 'repeats a label' });
        labels.add(range.label);
        if (i > 0 && (range.from ?? null) === null)
          context.addIssue({ code: 'custom', path: at('from'), message: 'is required after the first range' });
        if (i < ranges.length - 1 && (range.to ?? null) === null)
          context.addIssue({ code: 'custom', path: at('to'), message: 'is required before the last range' });
        if (i > 0 && range.from != null && ranges[i - 1]!.to != null && range.from !== ranges[i - 1]!.to)
          context.addIssue({
            code: 'custom',
            path: at('from'),
            message: `must equal the previous range's to (${ranges[i - 1]!.to}): ranges are contiguous`,
          });
        if (range.from != null && range.to != null && !(range.from < range.to))
          context.addIssue({ code: 'custom', path: at('to'), message: 'must be greater than from' });
      });
    }
  })
  .openapi({
    description:
      'Named ranges of NUMBER facet fields to count documents in: `{"price": [{"label": "cheap", "to": 20}, ' +
      '{"label": "mid", "from": 20, "to": 100}, {"label": "high", "from": 100}]}`. A range holds `from` ≤ value < ' +
      "`to`; ranges are listed in ascending order and contiguous (each `from` is the previous range's `to`); the " +
      `first may leave out \`from\`, the last \`to\`. Up to ${MAX_RANGE_FACET_FIELDS} fields of up to ` +
      `${MAX_RANGES_PER_FIELD} ranges. Counted without the field's own filters when \`disjunctive_facets\` is true.`,
  });

export const FacetRangesOutput = z
  .record(
    z.string(),
    z.array(z.object({ label: z.string(), from: z.number().nullable(), to: z.number().nullable(), count: z.int() })),
  )
  .openapi({ description: 'With `facet_ranges`: each range of each field with its count, in the order asked.' });
