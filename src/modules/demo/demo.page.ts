/**
 * The HTML of the demo storefront: a shell the page's script fills in from the public search API.
 * Everything it prints is escaped; no inline script or style, nothing from another origin.
 */

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Same origin only, and nothing inline: the page's data reaches its script as an escaped attribute. */
export const DEMO_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const head = (title: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/demo/assets/demo.css">
</head>`;

/** The storefront of the public search engine `key`; with `catalog`, products show whether they are in stock. */
export const demoPage = (key: string, { catalog }: { catalog: boolean }) => `${head(`Demo store: ${key}`)}
<body><div id="demo" data-key="${escapeHtml(key)}" data-catalog="${catalog}">
<header><h1>Demo store</h1><input id="q" type="search" placeholder="Search products" autocomplete="off"
aria-label="Search products" autofocus><select id="sort" aria-label="Sort" hidden></select></header>
<main><aside id="facets" aria-label="Filters"></aside><section><p id="status" role="status">Loading…</p>
<ol id="hits"></ol></section></main>
<footer>Search engine <code>${escapeHtml(key)}</code>: every request goes to the public
<code>/api/instant/search/${escapeHtml(key)}</code> endpoints${
  catalog ? `, and stock to the storefront catalog <code>/ucp/${escapeHtml(key)}</code>` : ''
}, without a token.</footer></div>
<script src="/demo/assets/demo.js"></script></body></html>`;

/** What a key that serves no public search engine gets; a long key is shown cut short. */
export function missingPage(key: string, reason: string) {
  // Control characters (a NUL included) are shown as U+FFFD, never echoed.
  // eslint-disable-next-line no-control-regex
  const printable = key.replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
  const shown = printable.length > 80 ? `${printable.slice(0, 80)}…` : printable;
  return `${head('Demo store: not found')}
<body><div id="demo"><h1>No demo store here</h1><p>${escapeHtml(reason)}: <code>${escapeHtml(shown)}</code></p>
<p>Make one with <code>npm run seed</code>, then open <a href="/demo/demo-shop">/demo/demo-shop</a>.</p></div>
</body></html>`;
}
