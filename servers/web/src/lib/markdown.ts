import type TurndownService from 'turndown';

export interface MarkdownPage {
  readonly markdown: string;
  readonly title: string | undefined;
}

/**
 * The article of an HTML page as Markdown: Readability picks the main content (the whole body when
 * it finds no article) and Turndown writes it out; the title is Readability's (a page's metadata
 * title, or its <title> without the site name), else the <title> as it is. jsdom only parses here:
 * it runs no page script (no runScripts) and loads no subresource (no resources option), so nothing
 * reaches the network. The page is parsed by DOMParser into a document with no browsing context,
 * where jsdom builds no style sheets: extraction needs none, building them took a large share of
 * the time, and a style sheet that trips jsdom's CSS parser no longer fails the whole page.
 * The three are loaded on first use: jsdom alone costs a few hundred milliseconds at start-up.
 */
export async function htmlToMarkdown(html: string, url: string): Promise<MarkdownPage> {
  const [{ JSDOM, VirtualConsole }, { Readability }, turndown] = await Promise.all([import('jsdom'), import('@mozilla/readability'), markdownWriter()]);
  // A console with no listeners: parse complaints about a page are not ours to print.
  const { window } = new JSDOM('', { url, virtualConsole: new VirtualConsole() });
  try {
    const parse = () => new window.DOMParser().parseFromString(html, 'text/html');
    const document = parse();
    const pageTitle = oneLine(document.title);
    const article = new Readability(document).parse();
    // Readability takes the document apart as it goes, so the body it found no article in is parsed again.
    const content = article?.content ?? parse().body?.innerHTML ?? '';
    return { markdown: turndown.turndown(content).trim(), title: oneLine(article?.title ?? '') ?? pageTitle };
  } finally {
    window.close();
  }
}

function oneLine(text: string): string | undefined {
  return text.replace(/\s+/g, ' ').trim() || undefined;
}

let writer: Promise<TurndownService> | undefined;

function markdownWriter(): Promise<TurndownService> {
  writer ??= import('turndown').then(({ default: Turndown }) => {
    const service = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' });
    service.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed']);
    service.addRule('table', { filter: 'table', replacement: (_content, node) => `\n\n${markdownTable(node as Element)}\n\n` });
    return service;
  });
  return writer;
}

/**
 * A table as a GFM pipe table, its first row as the header (Turndown alone writes each cell as a
 * paragraph). Cells are their text on one line; a nested table's cells join its parent cell's text.
 * Turndown's own HTML parser (it is handed the article as text, which is faster than walking jsdom's
 * nodes) counts a nested table's rows and cells in table.rows and row.cells, so they are read from
 * the children.
 */
function markdownTable(table: Element): string {
  const rows = ownRows(table).map((row) => childrenNamed(row, CELLS).map((cell) => (cell.textContent ?? '').replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|')));
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((row) => row.length));
  const line = (cells: readonly string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  const [header = [], ...body] = rows;
  return [line(header), line(Array<string>(width).fill('---')), ...body.map(line)].join('\n');
}

const ROWS = new Set(['TR']);
const CELLS = new Set(['TD', 'TH']);
const ROW_GROUPS = new Set(['THEAD', 'TBODY', 'TFOOT']);

function ownRows(table: Element): Element[] {
  return Array.from(table.children).flatMap((child) => (ROWS.has(child.nodeName) ? [child] : ROW_GROUPS.has(child.nodeName) ? childrenNamed(child, ROWS) : []));
}

function childrenNamed(parent: Element, names: ReadonlySet<string>): Element[] {
  return Array.from(parent.children).filter((child) => names.has(child.nodeName));
}
