// Retrieval metrics over graded labels (a query's `grades`: Map tool name → relevance > 0).
//   Recall@k  relevant tools in the top k / all relevant tools of the query
//   MRR       1 / rank of the first relevant tool (0 when none is ranked)
//   nDCG@10   DCG with linear gain = grade and discount log2(rank + 1), over the ideal ordering
//   MAP       mean over relevant tools of precision at their rank (unranked ones count 0)
// Each is averaged over queries.

export const RECALL_KS = [1, 3, 5, 10];

/** Metrics of one query given its ranked names (best first, the whole ranking). */
export function queryMetrics(ranked, grades) {
  const relevant = grades.size;
  const recall = {};
  for (const k of RECALL_KS) recall[k] = ranked.slice(0, k).filter((name) => grades.has(name)).length / relevant;
  const first = ranked.findIndex((name) => grades.has(name));
  let dcg = 0;
  ranked.slice(0, 10).forEach((name, i) => {
    dcg += (grades.get(name) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...grades.values()].sort((a, b) => b - a).slice(0, 10);
  const idcg = ideal.reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
  let found = 0;
  let precisionSum = 0;
  ranked.forEach((name, i) => {
    if (!grades.has(name)) return;
    found++;
    precisionSum += found / (i + 1);
  });
  return { recall, rr: first === -1 ? 0 : 1 / (first + 1), ndcg10: idcg > 0 ? dcg / idcg : 0, ap: precisionSum / relevant, firstRank: first === -1 ? undefined : first + 1 };
}

/** Averages over the queries, plus the per-query details. */
export function evaluate(index, queries) {
  const perQuery = [];
  const sums = { recall1: 0, recall3: 0, recall5: 0, recall10: 0, mrr: 0, ndcg10: 0, map: 0 };
  for (const query of queries) {
    const ranked = index.search(query.text, { limit: index.size }).map((hit) => hit.doc.name);
    const m = queryMetrics(ranked, query.grades);
    sums.recall1 += m.recall[1];
    sums.recall3 += m.recall[3];
    sums.recall5 += m.recall[5];
    sums.recall10 += m.recall[10];
    sums.mrr += m.rr;
    sums.ndcg10 += m.ndcg10;
    sums.map += m.ap;
    perQuery.push({ query, ranked, metrics: m });
  }
  const n = queries.length;
  const means = Object.fromEntries(Object.entries(sums).map(([key, sum]) => [key, n > 0 ? sum / n : 0]));
  return { means, perQuery };
}
