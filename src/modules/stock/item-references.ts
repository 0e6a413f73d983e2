import type { FieldProblem } from '../../kernel/errors';

/**
 * The problems of the `items[i].item_id` references of a request about one document (an order, a
 * transfer): each must name one of its items (`itemIds`, in lower case), and each only once.
 */
export function itemReferenceProblems(
  references: { item_id: string }[],
  itemIds: ReadonlySet<string>,
  document: string,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  references.forEach((reference, index) => {
    const itemId = reference.item_id.toLowerCase();
    const field = `items[${index}].item_id`;
    if (!itemIds.has(itemId)) problems.push({ field, message: `"${reference.item_id}" is not an item of ${document}` });
    else if (seen.has(itemId)) problems.push({ field, message: 'names an item named before' });
    seen.add(itemId);
  });
  return problems;
}
