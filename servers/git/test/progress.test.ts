import { afterEach, describe, expect, it } from 'vitest';
/** A progress notification's params as a client's onprogress gets them. */
type Progress = { progress: number; total?: number; message?: string };
import { git, initRepo, startGit, type GitHarness } from './helpers.js';

let h: GitHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('progress of git_log', () => {
  it('says how many commits it has read, on the call\'s own counter', async () => {
    h = await startGit();
    const repo = initRepo(h.ws.path('repo'));
    let stream = '';
    for (let n = 1; n <= 300; n++) stream += `commit refs/heads/main\ncommitter Bulk <bulk@example.com> ${1_600_000_000 + n} +0000\ndata 8\ncommit ${n % 10}\n\n`;
    git(repo, ['fast-import', '--quiet'], { input: stream });
    git(repo, ['reset', '-q', '--hard', 'main']);
    const updates: Progress[] = [];
    const result = await h.client.callTool({ name: 'git_log', arguments: { repo: 'repo', max_count: 300 } }, undefined, { onprogress: (update) => updates.push(update) });
    expect((result.structuredContent as { commits: unknown[] }).commits).toHaveLength(300);
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.every((update, i) => update.progress === i + 1 && update.total === undefined && /^git_log: \d+ commits read$/.test(update.message ?? ''))).toBe(true);
  });
});
