import type { PageBlock } from '../envelope';
import type { KeysetPage } from '../pagination';

/**
 * The `page` block of a list response: links keep every query parameter of the request except the
 * cursors, so filters and sorting survive paging.
 */
export function pageBlock(baseUrl: string, requestUrl: string, page: KeysetPage<unknown>): PageBlock {
  const url = new URL(requestUrl, 'http://placeholder');
  const link = (cursor?: { name: 'page[after]' | 'page[before]'; value: string }) => {
    const params = new URLSearchParams(url.search);
    params.delete('page[after]');
    params.delete('page[before]');
    if (cursor) params.set(cursor.name, cursor.value);
    const query = params.toString();
    return `${baseUrl}${url.pathname}${query ? `?${query}` : ''}`;
  };
  const after = page.hasNextPage ? page.endCursor : null;
  const before = page.hasPreviousPage ? page.startCursor : null;
  return {
    first: link(),
    next: after ? link({ name: 'page[after]', value: after }) : null,
    after,
    previous: before ? link({ name: 'page[before]', value: before }) : null,
    before,
  };
}
