/** The HTML of the service's own pages: no inline script, nothing loaded from another origin. */
import type { DocumentationPage } from './documentation';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Same origin only; styles inline (the renderers set them), scripts from files. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";

const BASE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}' +
  'code{color:#6e6e73;font-size:.85em}li{margin:.4rem 0}';
const DOCUMENT_STYLE =
  'nav{font-size:.9em;margin-bottom:2rem}pre{background:#f5f5f7;padding:.8rem;overflow-x:auto}' +
  'pre code{color:#1d1d1f}table{border-collapse:collapse;display:block;overflow-x:auto}' +
  'th,td{border:1px solid #d2d2d7;padding:.3rem .5rem;vertical-align:top;text-align:left}';

export interface Link {
  rel: string;
  href: string;
  title: string;
}

/** The documentation's sections on the home page, in the order of the README's map. */
const SECTIONS = [
  { section: 'guides', title: 'Guides' },
  { section: 'reference', title: 'Reference' },
  { section: 'operations', title: 'Operations' },
  { section: '', title: 'The project' },
];

function documentationList(pages: DocumentationPage[]) {
  return SECTIONS.map(({ section, title }) => {
    const items = pages
      .filter((page) => page.section === section)
      .map((page) => `<li><a href="${escape(page.path)}">${escape(page.title)}</a></li>`)
      .join('');
    return items ? `<h3>${escape(title)}</h3><ul>${items}</ul>` : '';
  }).join('');
}

export function homePage(name: string, version: string, links: Link[], documentation: DocumentationPage[]) {
  const items = links
    .map(
      (link) => `<li><a href="${escape(link.href)}">${escape(link.title)}</a> <code>${escape(link.href)}</code></li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(name)}</title><link rel="icon" href="data:,">
<style>${BASE_STYLE}</style></head>
<body><h1>${escape(name)}</h1><p>Version ${escape(version)}. REST under <code>/api</code>, GraphQL at
<code>/graphql</code>, both with an API key as bearer token.</p>
<p>Get a key: run <code>npm run admin -- quickstart</code> in the service's folder. It makes a tenant and a key with
every scope, and prints lines to paste into a shell for REST, GraphQL and the edge. Demo data:
<code>npm run seed</code> (a shop of 1,000 products, searchable at <code>/demo/demo-shop</code>).</p>
<ul>${items}</ul>
<h2>Documentation</h2><p>The guides of this version, as in the repository: start at
<a href="/README.md">the README</a>, whose map says what each page is for.</p>
${documentationList(documentation)}</body></html>`;
}

/** A page of the documentation, rendered from its markdown; links between pages stay relative. */
export function documentationPage(name: string, page: DocumentationPage, body: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(page.title)} · ${escape(name)}</title><link rel="icon" href="data:,">
<style>${BASE_STYLE}${DOCUMENT_STYLE}</style></head>
<body><nav><a href="/">${escape(name)}</a> · <a href="/README.md#where-to-find-what">Docs map</a> ·
<a href="/docs">API reference</a></nav><main>${body}</main></body></html>`;
}

export const docsPage = (name: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(name)}: API reference</title><link rel="icon" href="data:,"></head>
<body><div id="app"></div><script src="/docs/assets/standalone.js"></script><script src="/docs/assets/docs.js"></script>
</body></html>`;
