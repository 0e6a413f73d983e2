/**
 * The repository's documentation read as GitHub reads it: markdown parsed by markdown-it (raw HTML
 * off), each heading given GitHub's anchor (github-slugger, numbered like GitHub when a heading
 * repeats), so that a link `guide.md#anchor` that works on GitHub works on the served page too.
 * The service renders its pages with it, and the docs' tests read links, anchors and runnable
 * examples through it, so both see one outline.
 */
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';

type Token = ReturnType<MarkdownIt['parse']>[number];

const markdown = new MarkdownIt({ html: false, linkify: false });

/** A fenced block marked ```` ```sh run ````: an example the test suite runs. */
export interface RunnableBlock {
  /** Line (1-based) of the block's first command. */
  line: number;
  script: string;
}

export interface DocumentOutline {
  /** The text of the first level-1 heading. */
  title: string | undefined;
  /** The anchor of every heading, in order. */
  anchors: string[];
  /** Every link target (not those inside code), with the line it is on. */
  links: { href: string; line: number }[];
  runnable: RunnableBlock[];
}

/** The text GitHub makes a heading's anchor from: its inline content without markup. */
function plainText(inline: Token | undefined): string {
  return (inline?.children ?? [])
    .map((child) => (child.type === 'text' || child.type === 'code_inline' ? child.content : ''))
    .join('');
}

/** Parses a document and gives each heading its anchor as the `id` attribute. */
function parse(text: string) {
  const tokens = markdown.parse(text, {});
  const slugger = new GithubSlugger();
  tokens.forEach((token, index) => {
    if (token.type === 'heading_open') token.attrSet('id', slugger.slug(plainText(tokens[index + 1])));
  });
  return tokens;
}

export function outlineOf(text: string): DocumentOutline {
  const tokens = parse(text);
  const outline: DocumentOutline = { title: undefined, anchors: [], links: [], runnable: [] };
  // Inline tokens of table cells carry no line: they are on the line of the row around them.
  let line = 1;
  tokens.forEach((token, index) => {
    if (token.map) line = token.map[0] + 1;
    if (token.type === 'heading_open') {
      outline.anchors.push(token.attrGet('id')!);
      if (token.tag === 'h1') outline.title ??= plainText(tokens[index + 1]);
    } else if (token.type === 'inline') {
      for (const child of token.children ?? [])
        if (child.type === 'link_open') outline.links.push({ href: child.attrGet('href')!, line });
    } else if (token.type === 'fence' && token.info.trim() === 'sh run') {
      outline.runnable.push({ line: token.map![0] + 2, script: token.content.replace(/\n$/, '') });
    }
  });
  return outline;
}

/** The document as HTML, raw HTML in it escaped, headings with their anchors as ids. */
export function renderMarkdown(text: string): string {
  return markdown.renderer.render(parse(text), markdown.options, {});
}
