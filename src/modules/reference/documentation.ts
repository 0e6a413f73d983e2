/**
 * The repository's documentation, served read-only at the paths it has in the repository
 * (`/README.md`, `/docs/guides/edge.md`, ...), so that the relative links between pages work on
 * the service as they do on GitHub, and the pages always describe the version that is running.
 * A deployment cannot know where its repository is hosted (a fork, a mirror, an offline copy), so
 * the service serves its own copy rather than linking to one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { outlineOf, renderMarkdown } from './markdown';

/** The files of the documentation, relative to the repository: its top-level pages, then `docs/`. */
export function documentationFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  const topLevel = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'];
  return [...topLevel, ...walk('docs').sort()].filter((path) => existsSync(join(root, path)));
}

export interface DocumentationPage {
  /** The page's path on the service, as in the repository: `/docs/guides/edge.md`. */
  path: string;
  title: string;
  /** The folder it is in (`guides`, `reference`, `operations`), or '' at the top. */
  section: string;
}

/** The pages with their titles, read once when the service starts. */
export function documentationPages(root: string): DocumentationPage[] {
  return documentationFiles(root).map((file) => ({
    path: `/${file}`,
    title: outlineOf(readFileSync(join(root, file), 'utf8')).title ?? file,
    section: file.split('/').length > 2 ? file.split('/')[1]! : '',
  }));
}

/** A page's body as HTML, rendered when it is first asked for. */
export function documentationRenderer(root: string) {
  const rendered = new Map<string, string>();
  return (page: DocumentationPage) => {
    let html = rendered.get(page.path);
    if (html === undefined) {
      html = renderMarkdown(readFileSync(join(root, page.path), 'utf8'));
      rendered.set(page.path, html);
    }
    return html;
  };
}
