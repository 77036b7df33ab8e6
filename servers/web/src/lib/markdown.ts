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
    // The article stays a jsdom node: Turndown would otherwise parse it again with its own parser,
    // whose table.rows and row.cells also count the rows and cells of nested tables.
    const article = new Readability(document, { serializer: (node) => node }).parse();
    // Readability takes the document apart as it goes, so the body it found no article in is parsed again.
    const content = article?.content ?? parse().body;
    return { markdown: content ? turndown.turndown(content as HTMLElement).trim() : '', title: oneLine(article?.title ?? '') ?? pageTitle };
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
    service.addRule('table', { filter: 'table', replacement: (_content, node) => `\n\n${markdownTable(node as HTMLTableElement)}\n\n` });
    return service;
  });
  return writer;
}

/**
 * A table as a GFM pipe table, its first row as the header (Turndown alone writes each cell as a
 * paragraph). Cells are their text on one line; a nested table's cells join its parent cell's text.
 */
function markdownTable(table: HTMLTableElement): string {
  const rows = Array.from(table.rows, (row) => Array.from(row.cells, (cell) => (cell.textContent ?? '').replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|')));
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((row) => row.length));
  const line = (cells: readonly string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? '').join(' | ')} |`;
  const [header = [], ...body] = rows;
  return [line(header), line(Array<string>(width).fill('---')), ...body.map(line)].join('\n');
}
