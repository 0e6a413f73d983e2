/**
 * The members a merchandising rule may carry beside its conditions, `pin` and `hide`: a query that
 * replaces the one typed, a payload returned with the results, the period the rule is active in, and
 * the filters whose documents it boosts or buries.
 */
import { z } from '../../kernel/rest/schemas';

/** Filters of each of a rule's `boost` and `bury` lists. */
export const MAX_RULE_BOOSTS = 10;

/** `boost` and `bury`, over the filter schema of a search (key, operator, values). */
export const ruleBoostInput = <Filter extends z.ZodType>(filter: Filter) => ({
  boost: z
    .array(filter)
    .max(MAX_RULE_BOOSTS)
    .optional()
    .openapi({
      description:
        'Documents matching any of these filters come before the other documents of equal relevance (after the ' +
        "query's sort and the ranking rules); with an empty query, right after the sort. Checked like search filters.",
    }),
  bury: z
    .array(filter)
    .max(MAX_RULE_BOOSTS)
    .optional()
    .openapi({
      description:
        'Documents matching any of these filters come after the other documents of equal relevance; a document ' +
        'matching both a `boost` and a `bury` filter is buried. Pinned documents keep their positions.',
    }),
});

/** Bytes of a rule's `data` as JSON. */
export const MAX_RULE_DATA_BYTES = 4096;

const Timestamp = z.iso.datetime({ offset: true });

export const RuleExtensionsInput = {
  replace_query: z.string().max(200).optional().openapi({
    description: 'Searched instead of the query typed (the search log keeps the typed one).',
  }),
  data: z
    .record(z.string(), z.unknown())
    .optional()
    .refine(
      (data) => data === undefined || Buffer.byteLength(JSON.stringify(data)) <= MAX_RULE_DATA_BYTES,
      `must be at most ${MAX_RULE_DATA_BYTES} bytes as JSON`,
    )
    .openapi({
      description: 'Returned as `rule_data` in each index result the rule applies to (a banner, a redirect URL).',
    }),
  active_from: Timestamp.optional().openapi({ description: 'The rule is skipped before this time.' }),
  active_to: Timestamp.optional().openapi({ description: 'The rule is skipped from this time on.' }),
};

/** Refines a rule input: a period's start comes before its end. */
export const activePeriodIsOrdered = (rule: { active_from?: string; active_to?: string }) =>
  rule.active_from === undefined ||
  rule.active_to === undefined ||
  Date.parse(rule.active_from) < Date.parse(rule.active_to);

const RuleFilterOutput = z.object({ key: z.string(), operator: z.string(), values: z.array(z.unknown()).optional() });

export const RuleExtensionsOutput = {
  replace_query: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  active_from: z.string().optional(),
  active_to: z.string().optional(),
  boost: z.array(RuleFilterOutput).optional(),
  bury: z.array(RuleFilterOutput).optional(),
};

export const RuleDataOutput = z.record(z.string(), z.unknown()).optional().openapi({
  description: 'The `data` of the merchandising rule applied to this result; absent when it has none.',
});
