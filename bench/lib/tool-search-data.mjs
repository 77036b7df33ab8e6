// Loaders for the tool-retrieval data sets in ../shared/datasets/tool-retrieval (outside the repo;
// read in place, never copied). Each returns ToolDocs for the search index plus its queries.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `<repo>/../shared/datasets/tool-retrieval`, or a clear exit when it is not there. */
export function retrievalDataDir(repo) {
  const datasets = join(repo, '..', 'shared', 'datasets');
  const dir = join(datasets, 'tool-retrieval');
  if (!existsSync(dir)) {
    process.stderr.write(
      `tool-search bench: data sets not found at ${dir}\n` +
        'They live outside the repo, in ../shared/datasets/ next to the repo root (see ../shared/datasets/README.md); the bench reads them in place.\n',
    );
    process.exit(2);
  }
  return dir;
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    process.stderr.write(`tool-search bench: cannot read ${path}: ${error.message}\n`);
    process.exit(2);
  }
}

/** mcpproxy-golden: 45 tools (no input schemas), 47 queries with graded labels, their BM25 baseline. */
export function loadMcpproxy(dir) {
  const base = join(dir, 'mcpproxy-golden');
  const corpus = readJson(join(base, 'corpus_v1.tools.json'));
  const golden = readJson(join(base, 'retrieval_golden_v1.json'));
  const baseline = readJson(join(base, 'baseline_v1.json'));
  const docs = corpus.tools.map((tool) => ({ name: tool.tool_id, namespace: tool.server, tool: tool.tool, description: tool.description ?? '', params: [] }));
  const queries = golden.queries.map((q) => ({
    id: q.id,
    text: q.query,
    // relevance 0 marks a hard negative: graded, but not relevant.
    grades: new Map(q.labels.filter((label) => label.relevance > 0).map((label) => [label.tool_id, label.relevance])),
  }));
  const known = new Set(docs.map((doc) => doc.name));
  for (const q of queries) for (const id of q.grades.keys()) if (!known.has(id)) throw new Error(`mcpproxy-golden: ${q.id} labels unknown tool ${id}`);
  return {
    docs,
    queries,
    baseline: {
      recall1: baseline.recall_at['1'],
      recall3: baseline.recall_at['3'],
      recall5: baseline.recall_at['5'],
      recall10: baseline.recall_at['10'],
      mrr: baseline.mrr,
      ndcg10: baseline.ndcg_at_10,
      map: baseline.map,
    },
  };
}

/** RFC 4180 rows: quoted fields may hold commas, doubled quotes and line breaks. */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** MetaTool: 199 tools (name → description, no parameters); every query has one relevant tool. */
export function loadMetaTool(dir) {
  const base = join(dir, 'metatool');
  const plugins = readJson(join(base, 'plugin_des.json'));
  const docs = Object.entries(plugins).map(([name, description]) => ({ name, namespace: '', tool: name, description: description ?? '', params: [] }));
  const [header, ...rows] = parseCsv(readFileSync(join(base, 'all_clean_data.csv'), 'utf8'));
  if (header?.[0] !== 'Query' || header?.[1] !== 'Tool') throw new Error(`metatool: unexpected CSV header ${header}`);
  const known = new Set(docs.map((doc) => doc.name));
  const queries = [];
  let unknown = 0;
  for (const [text, tool] of rows) {
    if (!text || !tool) continue;
    if (!known.has(tool)) {
      unknown++;
      continue;
    }
    queries.push({ id: String(queries.length + 1), text, grades: new Map([[tool, 1]]) });
  }
  return { docs, queries, unknown };
}

/** LiveMCPTool: 527 tools of 70 servers with input schemas (some descriptions Chinese or empty). */
export function loadLiveMcpTool(dir, docFromJsonSchema) {
  const data = readJson(join(dir, 'livemcptool', 'tools.json'));
  const docs = data.tools.map((tool) => docFromJsonSchema(tool.server, { name: tool.tool, description: tool.description ?? '', inputSchema: tool.inputSchema }));
  return { docs, servers: new Set(data.tools.map((tool) => tool.server)).size, version: data.version };
}
