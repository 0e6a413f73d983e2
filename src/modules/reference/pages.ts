/** The HTML of the service's own pages: no inline script, nothing loaded from another origin. */

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Same origin only; styles inline (the renderers set them), scripts from files. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";

export interface Link {
  rel: string;
  href: string;
  title: string;
}

export function homePage(name: string, version: string, links: Link[]) {
  const items = links
    .map(
      (link) => `<li><a href="${escape(link.href)}">${escape(link.title)}</a> <code>${escape(link.href)}</code></li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(name)}</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
code{color:#6e6e73;font-size:.85em}li{margin:.4rem 0}</style></head>
<body><h1>${escape(name)}</h1><p>Version ${escape(version)}. REST under <code>/api</code>, GraphQL at
<code>/graphql</code>, both with an API key as bearer token.</p>
<p>Get a key: run <code>npm run admin -- quickstart</code> in the service's folder. It makes a tenant and a key with
every scope, and prints lines to paste into a shell for REST, GraphQL and the edge. Demo data:
<code>npm run seed</code> (a shop of 1,000 products, searchable at <code>/demo/demo-shop</code>).</p>
<ul>${items}</ul></body></html>`;
}

export const docsPage = (name: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(name)}: API reference</title><link rel="icon" href="data:,"></head>
<body><div id="app"></div><script src="/docs/assets/standalone.js"></script><script src="/docs/assets/docs.js"></script>
</body></html>`;
