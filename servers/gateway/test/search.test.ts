import { describe, expect, it } from 'vitest';
import { docFromJsonSchema, firstParagraph, paramSummary, parseSelect, ToolIndex, type ToolDoc } from '@bulkhead/gateway/search';

function doc(name: string, description: string, params: ToolDoc['params'] = [], title?: string): ToolDoc {
  const [namespace = '', tool = name] = name.includes(':') ? name.split(':') : ['', name];
  return { name, namespace, tool, description, params, ...(title ? { title } : {}) };
}

const DOCS: ToolDoc[] = [
  doc('fs:read_file', 'Read a file from the workspace, optionally a range of lines.', [
    { name: 'path', description: 'File to read, relative to a root' },
    { name: 'offset', description: 'First line to return' },
  ]),
  doc('fs:grep', 'Search file contents with a regular expression.', [{ name: 'pattern', description: 'Regular expression' }]),
  doc('fs:glob_files', 'List files whose paths match a glob, newest first.', [{ name: 'pattern', description: 'Glob such as **/*.ts' }]),
  doc('fs:list_files', 'List the entries of a directory.', [{ name: 'path' }]),
  doc('fs_write:write_file', 'Create a new file or overwrite one with new content.', [{ name: 'path' }, { name: 'content' }]),
  doc('fs_write:delete_path', 'Delete a file or an empty directory.', [{ name: 'path' }]),
  doc('web:web_fetch', 'Fetch a URL and return its content as markdown.', [{ name: 'url' }]),
  doc('web:web_search', 'Search the web and return result titles and links.', [{ name: 'query' }]),
  doc('git:git_log', 'Show the commit history of the repository.', [{ name: 'max_count', description: 'Most commits to show' }]),
  doc('notes:search_notes', 'Look through saved notes.', [{ name: 'text' }]),
  doc('docs:search_files', 'Finds documents by title.', []),
  doc('tz:convert', 'Converts between units.', [{ name: 'timezone', description: 'IANA timezone name such as Europe/Paris' }]),
  doc('calendar:schedule', 'Plans an event.', [{ name: 'attendeeEmails', description: 'Who is invited' }]),
];

const index = ToolIndex.build(DOCS);
const names = (query: string, options?: Parameters<ToolIndex['search']>[1]) => index.search(query, options).map((hit) => hit.doc.name);

describe('ToolIndex.search', () => {
  it('ranks an exact tool name first, in its qualified, wire and plain forms', () => {
    // `fs:grep`'s text says "search", so without the exact-name rule web_search could win "web_search" too.
    expect(names('fs:grep')[0]).toBe('fs:grep');
    expect(names('fs__grep')[0]).toBe('fs:grep');
    expect(names('grep')[0]).toBe('fs:grep');
    expect(names('web_search')[0]).toBe('web:web_search');
    expect(names('WEB__WEB_SEARCH')[0]).toBe('web:web_search');
    expect(names('`fs:read_file`')[0]).toBe('fs:read_file');
    expect(names('search_files')[0]).toBe('docs:search_files');
  });

  it('puts the exact name first even when another tool matches its words better', () => {
    // Two tools: after centring, their embeddings point in opposite directions, so one of them is
    // less like the query than the average tool; it still matches a query word and stays a hit.
    const pair = ToolIndex.build([doc('a:status', 'Reports.'), doc('b:status_report', 'Status of the status: status, status and more status.')]);
    // Not a name (the question mark): plain ranking prefers the tool that says "status" most.
    expect(pair.search('status?').map((hit) => hit.doc.name)).toEqual(['b:status_report', 'a:status']);
    expect(pair.search('status').map((hit) => hit.doc.name)).toEqual(['a:status', 'b:status_report']);
  });

  it('gives an exact name the top score, above every other hit', () => {
    const [first, second] = index.search('fs__read_file');
    expect(first?.doc.name).toBe('fs:read_file');
    expect(first!.score).toBeGreaterThan(second!.score);
  });

  it('splits identifiers: snake_case names match plain words and camelCase queries', () => {
    expect(names('read file')[0]).toBe('fs:read_file');
    expect(names('readFile')[0]).toBe('fs:read_file');
    expect(names('read-file')[0]).toBe('fs:read_file');
    expect(names('GlobFiles')[0]).toBe('fs:glob_files');
  });

  it('splits a glued query word into two corpus words', () => {
    expect(names('readfile')[0]).toBe('fs:read_file');
  });

  it('stems, so other forms of a word match', () => {
    expect(names('searching files')).toContain('docs:search_files');
    expect(names('deleting directories')[0]).toBe('fs_write:delete_path');
    expect(names('commits')).toContain('git:git_log');
  });

  it('expands common synonyms (remove → delete, folder → directory)', () => {
    expect(names('remove a folder')[0]).toBe('fs_write:delete_path');
  });

  it('finds a tool through its parameter names and parameter descriptions', () => {
    // Only tz:convert mentions time zones, and only in its parameter.
    expect(names('timezone')[0]).toBe('tz:convert');
    expect(names('IANA')[0]).toBe('tz:convert');
    // camelCase parameter name, split.
    expect(names('attendee emails')[0]).toBe('calendar:schedule');
  });

  it('weighs a word in the name above the same word in a description', () => {
    const pair = ToolIndex.build([doc('n:archive', 'Keeps notes for later.'), doc('n:notes', 'Keeps records for later.')]);
    expect(pair.search('note').map((hit) => hit.doc.name)).toEqual(['n:notes', 'n:archive']);
  });

  it('falls back to prefix and substring matches when no term matches', () => {
    expect(names('markd')[0]).toBe('web:web_fetch'); // prefix of "markdown"
    // Neither a corpus word nor one the word embeddings know ("word" alone would be known to them).
    expect(names('zzz_qxv_xyzzy')).toEqual([]);
  });

  it('never returns a doc the filter excludes, not even for its exact name', () => {
    const hidden = (d: ToolDoc) => d.namespace !== 'fs_write';
    expect(names('fs_write:delete_path', { filter: hidden })).not.toContain('fs_write:delete_path');
    expect(names('delete_path', { filter: hidden })).not.toContain('fs_write:delete_path');
    expect(names('delete a file', { filter: hidden, limit: 100 }).every((name) => !name.startsWith('fs_write:'))).toBe(true);
    expect(names('write_file', { filter: () => false })).toEqual([]);
  });

  it('returns at most `limit` hits, 5 by default', () => {
    expect(index.search('file').length).toBe(5);
    expect(index.search('file', { limit: 2 }).length).toBe(2);
    expect(index.search('file', { limit: 100 }).length).toBeLessThanOrEqual(DOCS.length);
    expect(index.search('file', { limit: 0 })).toEqual([]);
    expect(index.search('file', { limit: -3 })).toEqual([]);
  });

  it('returns nothing for an empty query, one of white space, or one of stop words only', () => {
    expect(index.search('')).toEqual([]);
    expect(index.search('   \n\t')).toEqual([]);
    expect(index.search('the of and')).toEqual([]);
  });

  it('returns hits best first with positive scores', () => {
    const hits = index.search('search', { limit: 10 });
    expect(hits.length).toBeGreaterThan(1);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    for (const hit of hits) expect(hit.score).toBeGreaterThan(0);
  });

  it('is deterministic and breaks ties by qualified name', () => {
    const twins = ToolIndex.build([doc('b:same', 'Identical text.'), doc('c:same', 'Identical text.'), doc('a:same', 'Identical text.')]);
    const ranked = twins.search('identical text').map((hit) => hit.doc.name);
    expect(ranked).toEqual(['a:same', 'b:same', 'c:same']);
    // Several tools share the plain name: all of them first, ties by name.
    expect(twins.search('same').map((hit) => hit.doc.name)).toEqual(['a:same', 'b:same', 'c:same']);
    // The same docs in another order give the same ranking, and so does the same query again.
    const again = ToolIndex.build([...DOCS].reverse());
    for (const query of ['file', 'search the web', 'read', 'list directory entries']) {
      expect(again.search(query, { limit: 20 })).toEqual(index.search(query, { limit: 20 }));
      expect(index.search(query, { limit: 20 })).toEqual(index.search(query, { limit: 20 }));
    }
  });

  it('indexes non-Latin text', () => {
    const zh = ToolIndex.build([doc('rail:tickets', '查询12306中转余票信息。'), doc('rail:date', '获取当前日期')]);
    expect(zh.search('余票')[0]?.doc.name).toBe('rail:tickets');
    expect(zh.search('当前日期')[0]?.doc.name).toBe('rail:date');
  });

  it('reports its size and refuses duplicate names', () => {
    expect(index.size).toBe(DOCS.length);
    expect(ToolIndex.build([]).size).toBe(0);
    expect(ToolIndex.build([]).search('anything')).toEqual([]);
    expect(() => ToolIndex.build([doc('a:x', 'one'), doc('a:x', 'two')])).toThrow(/duplicate tool name/);
  });

  it('bounds the work of a huge query', () => {
    const hits = index.search(`${'read file '.repeat(10_000)}`);
    expect(hits[0]?.doc.name).toBe('fs:read_file');
  });
});

describe('ToolIndex.search with word embeddings', () => {
  const TOPICS = [
    doc('weather:forecast', 'Predicts rain and temperature for a city.'),
    doc('music:play', 'Plays songs from a playlist.'),
    doc('bank:balance', 'Shows the money in an account.'),
    doc('fs:read_file', 'Reads a file from disk.'),
  ];
  const topics = ToolIndex.build(TOPICS);
  const top = (index: ToolIndex, query: string) => index.search(query).map((hit) => hit.doc.name);

  it('finds a tool that shares no word with the query, the same way every time', () => {
    expect(top(topics, 'Will it be sunny tomorrow?')).toEqual(['weather:forecast']);
    expect(top(topics, 'listen to a tune')).toEqual(['music:play']);
    expect(top(topics, 'how much cash do I have')).toEqual(['bank:balance']);
    const reversed = ToolIndex.build([...TOPICS].reverse());
    for (const query of ['listen to a tune', 'open a document']) expect(reversed.search(query)).toEqual(topics.search(query));
  });

  it('finds nothing for those queries with the embeddings off', () => {
    const lexical = ToolIndex.build(TOPICS, { embeddings: false });
    expect(top(lexical, 'Will it be sunny tomorrow?')).toEqual([]);
    expect(top(lexical, 'listen to a tune')).toEqual([]);
  });

  it('judges a tool by its server as well, so a sibling of the closest tool comes along', () => {
    const tools = [
      doc('git:git_log', 'Shows the commit logs.'),
      doc('git:git_status', 'Shows the working tree status.'),
      doc('weather:forecast', 'Shows rain and temperature for a city.'),
    ];
    // No query word is in any tool (and "untracked" is unknown to the embeddings too).
    const query = 'which files are untracked in my repository';
    expect(ToolIndex.build(tools).search(query).map((hit) => hit.doc.name)).toEqual(['git:git_log', 'git:git_status']);
    expect(ToolIndex.build(tools, { embeddingTarget: 'tool' }).search(query).map((hit) => hit.doc.name)).toEqual(['git:git_log']);
  });
});

describe('parseSelect', () => {
  it('returns the names after select:, trimmed, empty ones dropped', () => {
    expect(parseSelect('select:fs__read_file')).toEqual(['fs__read_file']);
    expect(parseSelect('select: fs:read_file , web__web_fetch,,')).toEqual(['fs:read_file', 'web__web_fetch']);
    expect(parseSelect('  SELECT:grep')).toEqual(['grep']);
    expect(parseSelect('select:')).toEqual([]);
  });

  it('returns undefined for a query that is not a select', () => {
    expect(parseSelect('read file')).toBeUndefined();
    expect(parseSelect('please select:x')).toBeUndefined();
    expect(parseSelect('selection of files')).toBeUndefined();
  });
});

describe('docFromJsonSchema', () => {
  it('takes the top-level properties and their descriptions as parameters', () => {
    const d = docFromJsonSchema('fs', {
      name: 'read_file',
      title: 'Read file',
      description: 'Reads a file.',
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File to read' },
          limit: { type: 'integer' },
          options: { type: 'object', properties: { nested: { type: 'string', description: 'not indexed' } } },
        },
        required: ['path'],
      },
    });
    expect(d).toEqual({
      name: 'fs:read_file',
      namespace: 'fs',
      tool: 'read_file',
      title: 'Read file',
      description: 'Reads a file.',
      params: [{ name: 'path', description: 'File to read' }, { name: 'limit' }, { name: 'options' }],
    });
  });

  it('copes with a missing or odd schema and description', () => {
    expect(docFromJsonSchema('x', { name: 't' })).toEqual({ name: 'x:t', namespace: 'x', tool: 't', description: '', params: [] });
    expect(docFromJsonSchema('x', { name: 't', inputSchema: { properties: [1, 2] } }).params).toEqual([]);
    expect(docFromJsonSchema('x', { name: 't', inputSchema: 'nonsense' }).params).toEqual([]);
    expect(docFromJsonSchema('x', { name: 't', inputSchema: { properties: { a: { description: 3 } } } }).params).toEqual([{ name: 'a' }]);
  });

  it('feeds the index: a parameter description makes a tool findable', () => {
    const d = docFromJsonSchema('geo', { name: 'lookup', description: 'Looks things up.', inputSchema: { type: 'object', properties: { postcode: { type: 'string', description: 'A postal code' } } } });
    const other = docFromJsonSchema('geo', { name: 'other', description: 'Something else.' });
    expect(ToolIndex.build([other, d]).search('postal code')[0]?.doc.name).toBe('geo:lookup');
  });
});

describe('firstParagraph and paramSummary', () => {
  it('keeps the first paragraph, whitespace collapsed, cut at a word boundary', () => {
    expect(firstParagraph('First line\ncontinues here.\n\nSecond paragraph.')).toBe('First line continues here.');
    expect(firstParagraph('one two three four five six', 12)).toBe('one two…');
    expect(firstParagraph('')).toBe('');
  });

  it('lists parameter names, or (none)', () => {
    expect(paramSummary(DOCS[0]!)).toBe('path, offset');
    expect(paramSummary(doc('a:b', 'x'))).toBe('(none)');
    const many = doc('a:b', 'x', Array.from({ length: 100 }, (_, i) => ({ name: `param_${i}` })));
    expect(paramSummary(many).length).toBeLessThanOrEqual(203);
    expect(paramSummary(many).endsWith(', …')).toBe(true);
  });
});
