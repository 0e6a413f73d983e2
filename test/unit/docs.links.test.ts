/**
 * The docs hold together as a newcomer finds them on GitHub: every relative link of README.md,
 * CONTRIBUTING.md, CHANGELOG.md and docs/** reaches a file, every `#anchor` a heading of it (by
 * GitHub's anchor rules), every page is on the README's map and opens with what it is for and a
 * link onwards, and the configuration page describes exactly the variables the service reads.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/kernel/config';
import { documentationFiles } from '../../src/modules/reference/documentation';
import { outlineOf } from '../../src/modules/reference/markdown';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const files = documentationFiles(root);
const outlines = new Map(files.map((file) => [file, outlineOf(read(file))]));

/** A link's target as a repository path and an anchor, or undefined for a link that leaves the repository. */
function resolveLink(from: string, href: string): { path: string; anchor: string } | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined;
  const [path = '', anchor = ''] = href.split('#');
  return { path: path === '' ? from : normalize(join(dirname(from), decodeURIComponent(path))), anchor };
}

describe("the docs' links", () => {
  it('cover the README, CONTRIBUTING.md, CHANGELOG.md and every page under docs/', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md']));
    expect(files).toEqual(
      expect.arrayContaining([
        'docs/guides/edge.md',
        'docs/reference/errors.md',
        'docs/operations/health.md',
        'docs/benchmarks.md',
      ]),
    );
  });

  it('finds the anchors GitHub makes (code spans kept, punctuation dropped, repeats numbered)', () => {
    const { anchors } = outlineOf('# Token endpoint: `POST /api/oauth/authorize`\n\n## A, b (c)\n\n## A, b (c)\n');
    expect(anchors).toEqual(['token-endpoint-post-apioauthauthorize', 'a-b-c', 'a-b-c-1']);
  });

  it.each(files)('%s: every relative link reaches a file, and every anchor a heading of it', (file) => {
    const broken: string[] = [];
    for (const { href, line } of outlines.get(file)!.links) {
      if (href.startsWith('/')) {
        broken.push(`line ${line}: ${href} is an absolute path; on GitHub a link must be relative`);
        continue;
      }
      const target = resolveLink(file, href);
      if (!target) continue;
      if (!existsSync(join(root, target.path))) {
        broken.push(`line ${line}: ${href}: no file ${target.path}`);
        continue;
      }
      if (target.anchor === '') continue;
      const anchors = outlines.get(target.path)?.anchors ?? outlineOf(read(target.path)).anchors;
      if (!target.path.endsWith('.md') || !anchors.includes(target.anchor))
        broken.push(`line ${line}: ${href}: ${target.path} has no heading #${target.anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it("puts every page on the README's map", () => {
    const mapped = new Set(
      outlines.get('README.md')!.links.flatMap(({ href }) => resolveLink('README.md', href)?.path ?? []),
    );
    expect(files.filter((file) => file !== 'README.md' && !mapped.has(file))).toEqual([]);
  });

  it.each(files.filter((file) => file.startsWith('docs/') || file === 'CONTRIBUTING.md'))(
    '%s opens with its title, then a paragraph saying what it is for that links to its neighbours',
    (file) => {
      const [title, opening] = read(file).split('\n\n');
      expect(title, 'a level-1 heading first').toMatch(/^# \S/);
      expect(opening, 'then a paragraph').toMatch(/^For /);
      expect(outlineOf(opening!).links.length, 'with links to other pages').toBeGreaterThan(0);
    },
  );
});

describe('docs/reference/configuration.md', () => {
  const rows = [...read('docs/reference/configuration.md').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map(
    (row) => row[1]!,
  );

  it('has a row for every variable the service reads', () => {
    expect(CONFIG_VARIABLES.filter((name) => !rows.includes(name))).toEqual([]);
  });

  it('has no row for a variable the service does not read', () => {
    expect(rows.filter((name) => !CONFIG_VARIABLES.includes(name))).toEqual([]);
  });
});
