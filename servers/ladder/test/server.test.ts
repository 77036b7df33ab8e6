import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Ask, Claim, ClaimableAsk, LaneWithHistory } from '../src/store/work-queue.js';
import type { RungReading } from '../src/ladder/ladder.js';
import type { SearchHit } from '../src/store/rungs.js';
import { ladderTools } from '../src/server.js';
import { commit } from './ladder-helpers.js';
import { ladderWorld, type LadderWorld } from './server-helpers.js';

let world: LadderWorld;

afterEach(async () => {
  await world.close();
});

describe('the ladder server over MCP', () => {
  it('lists every tool with its risk tier', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    expect((await ada.listTools()).sort()).toEqual(ladderTools.map((tool) => tool.name).sort());
    const risks = Object.fromEntries(ladderTools.map((tool) => [tool.name, tool.risk]));
    expect(risks['ladder_read']).toBe('low');
    expect(risks['ask_claim']).toBe('medium');
    expect(risks['role_grant']).toBe('high');
  });

  it('makes no database file until a call writes: starting, listing the tools and reading leave the folder as it was', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const before = readdirSync(world.controlDir).sort();
    expect((await ada.listTools()).length).toBe(ladderTools.length);
    // Reads answer what a fresh file would: nothing written yet, and the first actor owning the repository.
    expect((await ada.call<{ lanes: LaneWithHistory[] }>('lane_list')).structured.lanes).toEqual([]);
    expect((await ada.call<{ hits: SearchHit[] }>('ladder_search', { query: 'widgets' })).structured.hits).toEqual([]);
    const owners = async () => (await ada.call<{ roles: { principal: string; role: string }[] }>('role_list', {})).structured.roles.filter(({ role }) => role === 'owner').map(({ principal }) => principal);
    expect(await owners()).toEqual(['ada']);
    expect(readdirSync(world.controlDir).sort()).toEqual(before);

    const lane = await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Ship widgets' });
    expect(lane.structured.lane.coordinator).toBe('ada');
    expect(existsSync(join(world.controlDir, 'ladder.db'))).toBe(true);
    expect(await owners()).toEqual(['ada']);
    expect((await ada.call<{ lanes: LaneWithHistory[] }>('lane_list')).structured.lanes.map((listed) => listed.id)).toEqual([lane.structured.lane.id]);
  });

  it('runs a lane: a dependent ask becomes claimable once its dependency is answered', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const bob = await world.connect('bob');

    const proposed = await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Ship widgets', goal: 'v1' });
    expect(proposed.isError).toBe(false);
    const lane = proposed.structured.lane;
    expect(lane.repo).toBe('local/repo');
    expect(lane.coordinator).toBe('ada');

    const first = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Write the parser' })).structured.ask;
    const second = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Document the parser', depends_on: [first.id] })).structured.ask;
    expect(second.waiting_on).toEqual([first.id]);

    const before = await bob.call<{ claimable: ClaimableAsk[] }>('ask_query_claimable', { lane_id: lane.id });
    expect(before.structured.claimable.map((entry) => entry.ask.id)).toEqual([first.id]);

    const early = await bob.call('ask_claim', { ask_id: second.id });
    expect(early.isError).toBe(true);
    expect(early.text).toContain(`waiting on ${first.id}`);

    const claim = (await bob.call<{ claim: Claim }>('ask_claim', { ask_id: first.id })).structured.claim;
    expect(claim.ask.holder).toBe('bob');
    const answered = await bob.call<{ ask: Ask }>('ask_answer', { ask_id: first.id, fence: claim.fence, answer: 'complete', note: 'done' });
    expect(answered.isError).toBe(false);
    expect(answered.structured.ask.state).toBe('answered');

    const after = await bob.call<{ claimable: ClaimableAsk[] }>('ask_query_claimable', { lane_id: lane.id });
    expect(after.structured.claimable.map((entry) => entry.ask.id)).toEqual([second.id]);
    expect(after.text).toContain('Document the parser');

    const next = await bob.call<{ claim: Claim | null }>('ask_claim_next', { lane_id: lane.id });
    expect(next.structured.claim?.ask.id).toBe(second.id);
    const none = await ada.call<{ claim: Claim | null }>('ask_claim_next', { lane_id: lane.id });
    expect(none.structured.claim).toBeNull();
    expect(none.text).toBe('nothing in this lane is claimable for you now');

    const history = (await ada.call<{ lane: LaneWithHistory }>('lane_get', { lane_id: lane.id })).structured.lane.history;
    expect(history.length).toBeGreaterThan(0);
  });

  it('pauses and resumes a lane, cancels an ask (blocking what depends on it) and revokes a role', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const bob = await world.connect('bob');
    const lane = (await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Ship widgets' })).structured.lane;
    const first = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Write the parser' })).structured.ask;
    const second = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'work', title: 'Document it', depends_on: [first.id] })).structured.ask;

    expect((await ada.call<{ lane: LaneWithHistory }>('lane_set_state', { lane_id: lane.id, state: 'active' })).structured.lane.state).toBe('active');
    expect((await ada.call<{ lane: LaneWithHistory }>('lane_set_state', { lane_id: lane.id, state: 'paused', reason: 'waiting for review' })).structured.lane.state).toBe('paused');
    const whilePaused = await bob.call('ask_claim', { ask_id: first.id });
    expect(whilePaused.isError).toBe(true);
    expect(whilePaused.text).toContain('paused');
    const notCoordinator = await bob.call('lane_set_state', { lane_id: lane.id, state: 'active' });
    expect(notCoordinator.isError).toBe(true);
    await ada.call('lane_set_state', { lane_id: lane.id, state: 'active' });

    const cancelled = await ada.call<{ ask: Ask }>('ask_cancel', { ask_id: first.id, reason: 'not needed' });
    expect(cancelled.structured.ask.state).toBe('cancelled');
    expect((await ada.call('ask_cancel', { ask_id: first.id })).isError).toBe(true);
    const claimable = await bob.call<{ claimable: ClaimableAsk[] }>('ask_query_claimable', { lane_id: lane.id });
    expect(claimable.structured.claimable.map((entry) => entry.ask.id)).not.toContain(second.id);
    const refused = await bob.call('ask_claim', { ask_id: second.id });
    expect(refused.text).toContain(first.id);

    expect((await ada.call('role_grant', { principal: 'bob', role: 'maintainer' })).isError).toBe(false);
    expect((await ada.call<{ revoked: boolean }>('role_revoke', { principal: 'bob', role: 'maintainer' })).structured.revoked).toBe(true);
    expect((await ada.call<{ revoked: boolean }>('role_revoke', { principal: 'bob', role: 'maintainer' })).structured.revoked).toBe(false);
    expect((await bob.call('role_revoke', { principal: 'ada', role: 'owner' })).isError).toBe(true);
  });

  it('refuses a coordinator-scope answer in words an agent can act on', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const bob = await world.connect('bob');
    const lane = (await ada.call<{ lane: LaneWithHistory }>('lane_propose', { title: 'Release' })).structured.lane;
    const submit = (await ada.call<{ ask: Ask }>('ask_post', { lane_id: lane.id, kind: 'submit_changeset', title: 'Commit it' })).structured.ask;
    const refused = await bob.call('ask_claim', { ask_id: submit.id });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/coordinator scope/);
  });

  it('refuses an actor argument that is not the caller', async () => {
    world = await ladderWorld();
    const bob = await world.connect('bob');
    const refused = await bob.call('lane_propose', { title: 'Sneaky', actor: 'ada' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('this call is made by bob');
    const own = await bob.call('lane_propose', { title: 'Honest', actor: 'bob' });
    expect(own.isError).toBe(false);
  });

  it('lets the first stdio actor own the default repository and grant roles; a later one may not', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const bob = await world.connect('bob');
    const granted = await ada.call('role_grant', { principal: 'bob', role: 'maintainer' });
    expect(granted.isError).toBe(false);
    const roles = await ada.call<{ roles: { principal: string; role: string }[] }>('role_list', {});
    expect(roles.structured.roles).toEqual(expect.arrayContaining([expect.objectContaining({ principal: 'bob', role: 'maintainer' })]));
    const laneless = await ada.call('role_grant', { principal: 'bob', role: 'coordinator' });
    expect(laneless.isError).toBe(true);
    expect(laneless.text).toContain('give lane_id');
    const refused = await bob.call('role_grant', { principal: 'eve', role: 'owner' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/owner/);
  });

  it('writes a rung and reads it back fresh, then stale after a commit touching it', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const written = await ada.call('ladder_write_rung', {
      rungs: [
        { path: 'src/index.js', kind: 'file', commit: 'HEAD', summary: 'The entry point of widgets', expected_revision: 0 },
        { path: 'src', kind: 'directory', commit: 'HEAD', summary: 'Sources' },
      ],
    });
    expect(written.isError, written.text).toBe(false);

    const read = await ada.call<{ reading: RungReading }>('ladder_read', { path: 'src/index.js' });
    expect(read.structured.reading.freshness).toBe('fresh');
    expect(read.structured.reading.rung?.author).toBe('ada');
    expect(read.text).toContain('The entry point of widgets');

    const dir = await ada.call<{ reading: RungReading }>('ladder_read', { path: 'src' });
    expect(dir.structured.reading.children.map((child) => child.path)).toEqual(['src/index.js']);

    commit(world.repoDir, 'change the entry point', { 'src/index.js': 'export const x = 1;\n' });
    const stale = await ada.call<{ reading: RungReading }>('ladder_read', { path: 'src/index.js' });
    expect(stale.structured.reading.freshness).toBe('stale');

    const conflict = await ada.call('ladder_write_rung', { rungs: [{ path: 'src/index.js', kind: 'file', commit: 'HEAD', summary: 'again', expected_revision: 0 }] });
    expect(conflict.isError).toBe(true);

    const tree = await ada.call<{ tree: { counts: Record<string, number> } }>('ladder_tree', {});
    expect(tree.structured.tree.counts['stale']).toBe(2);
  });

  it('finds a rung by its words and refuses rungs for a repository it has no git for', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    await ada.call('ladder_write_rung', { rungs: [{ path: 'README.md', kind: 'file', commit: 'HEAD', summary: 'Explains the gizmo frobnicator' }] });
    const found = await ada.call<{ hits: SearchHit[] }>('ladder_search', { query: 'frobnicator' });
    expect(found.structured.hits.map((hit) => hit.path)).toEqual(['README.md']);
    expect(found.text).toContain('[frobnicator]');

    const elsewhere = await ada.call('ladder_read', { repo: 'acme/other', path: '_repo' });
    expect(elsewhere.isError).toBe(true);
    expect(elsewhere.text).toContain('keeps rungs only for local/repo');

    const reindexed = await ada.call<{ reindex: { indexed: number } }>('ladder_reindex', {});
    expect(reindexed.structured.reindex.indexed).toBe(1);
  });
});

describe("zz's _repo lane", () => {
  it('is the repository’s standing lane: made by the first writing call, one across servers, coordinated by the owner', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const bob = await world.connect('bob');
    const carol = await world.connect('carol');

    const before = await bob.call('lane_get', { lane_id: '_repo' });
    expect(before.isError).toBe(true);
    expect(before.text).toBe('local/repo has no _repo lane yet; the first ask posted to _repo makes it');
    expect((await ada.call<{ lanes: LaneWithHistory[] }>('lane_list')).structured.lanes).toEqual([]);
    // Reading made no database file; the first writing call makes it, and its server's actor (ada) owns the repository.
    expect(existsSync(join(world.controlDir, 'ladder.db'))).toBe(false);
    expect((await ada.call('role_grant', { principal: 'dave', role: 'maintainer' })).isError).toBe(false);

    const [byBob, byCarol] = await Promise.all([
      bob.call<{ ask: Ask }>('ask_post', { lane_id: '_repo', kind: 'work', title: 'Summarise src/' }),
      carol.call<{ ask: Ask }>('ask_post', { lane_id: '_repo', kind: 'question', title: 'Who owns releases?' }),
    ]);
    const laneId = byBob.structured.ask.lane_id;
    expect(laneId).toMatch(/^lane-[0-9a-f]{10}$/);
    expect(byCarol.structured.ask.lane_id).toBe(laneId);
    const lane = (await bob.call<{ lane: LaneWithHistory }>('lane_get', { lane_id: '_repo' })).structured.lane;
    expect(lane).toMatchObject({ id: laneId, repo: 'local/repo', title: 'local/repo', state: 'active', coordinator: 'ada' });
    expect(['bob', 'carol']).toContain(lane.history[0]!.actor);
    expect((await ada.call<{ lanes: LaneWithHistory[] }>('lane_list')).structured.lanes.map((listed) => listed.id)).toEqual([laneId]);

    const claim = await carol.call<{ claim: Claim | null }>('ask_claim_next', { lane_id: '_repo', kind: 'work' });
    expect(claim.structured.claim?.ask.id).toBe(byBob.structured.ask.id);

    const pausedByBob = await bob.call('lane_set_state', { lane_id: '_repo', state: 'paused' });
    expect(pausedByBob.isError).toBe(true);
    expect(pausedByBob.text).toContain('needs coordinator scope');
    expect((await ada.call<{ lane: LaneWithHistory }>('lane_set_state', { lane_id: '_repo', state: 'paused' })).structured.lane.state).toBe('paused');
    for (const state of ['done', 'abandoned']) {
      const closed = await ada.call('lane_set_state', { lane_id: '_repo', state });
      expect(closed.text).toBe(`${laneId} is local/repo's _repo lane, which stays open for the repository's work; pause it instead`);
    }
    expect((await ada.call<{ lane: LaneWithHistory }>('lane_set_state', { lane_id: '_repo', state: 'active' })).structured.lane.state).toBe('active');
  });

  it('names the lane ids it accepts when given neither', async () => {
    world = await ladderWorld();
    const ada = await world.connect('ada');
    const wrong = await ada.call('lane_get', { lane_id: 'repo' });
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toBe('Invalid arguments for ladder:lane_get: `lane_id`: a lane id looks like lane-0123456789, or _repo for the repository\'s standing lane');
  });
});
