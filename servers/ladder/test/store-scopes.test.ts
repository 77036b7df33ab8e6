import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO, refused, STORE_BACKENDS, storeFixture, type StoreFixture } from './store-fixture.js';

/**
 * Who may do what: alice proposes the lane (its coordinator), olga owns the repo, mia maintains the
 * lane, rita maintains the whole repo, bob is any contributor.
 */
describe.each(STORE_BACKENDS)('roles and scopes on %s', (backend) => {
  let f: StoreFixture;
  let laneId: string;
  beforeEach(async () => {
    f = await storeFixture(backend, { extraKinds: [{ name: 'release_approval', scope: 'maintainer', answers: ['grant', 'deny'] }] });
    await f.store.seedOwner(REPO, 'olga');
    laneId = (await f.store.proposeLane({ repo: REPO, title: 'Release 2.0' }, 'alice')).id;
    await f.store.grantRole({ repo: REPO, principal: 'mia', role: 'maintainer', lane_id: laneId }, 'olga');
    await f.store.grantRole({ repo: REPO, principal: 'rita', role: 'maintainer' }, 'olga');
  });
  afterEach(() => f.cleanup());

  const post = async (kind: string, title = kind) => (await f.store.postAsk({ lane_id: laneId, kind, title }, 'bob')).ask;

  it('the proposer becomes the lane coordinator', async () => {
    const lane = await f.store.getLane(laneId);
    expect(lane).toMatchObject({ coordinator: 'alice', state: 'proposed' });
    expect(await f.store.scopesOn(laneId, 'alice')).toEqual(['contributor', 'coordinator']);
    expect(await f.store.listRoles(REPO, { principal: 'alice' })).toEqual([expect.objectContaining({ role: 'coordinator', lane_id: laneId, granted_by: 'alice' })]);
  });

  it('scopes: contributor always; maintainers per lane or repo; an owner holds every scope', async () => {
    expect(await f.store.scopesOn(laneId, 'bob')).toEqual(['contributor']);
    expect(await f.store.scopesOn(laneId, 'mia')).toEqual(['contributor', 'maintainer']);
    expect(await f.store.scopesOn(laneId, 'rita')).toEqual(['contributor', 'maintainer']);
    await f.store.grantRole({ repo: REPO, principal: 'mia', role: 'coordinator', lane_id: laneId }, 'olga');
    expect(await f.store.scopesOn(laneId, 'mia')).toEqual(['contributor', 'coordinator', 'maintainer']);
    expect(new Set(await f.store.scopesOn(laneId, 'olga'))).toEqual(new Set(['contributor', 'maintainer', 'coordinator']));
    const otherLane = await f.store.proposeLane({ repo: REPO, title: 'other' }, 'bob');
    expect(await f.store.scopesOn(otherLane.id, 'mia')).toEqual(['contributor']);
    expect(await f.store.scopesOn(otherLane.id, 'alice')).toEqual(['contributor']);
  });

  it('only maintainers claim and answer a changeset_review; the coordinator is not a maintainer', async () => {
    const review = await post('changeset_review');
    await refused(f.store.claim(review.id, 'bob'), /claiming .* \(changeset_review\) needs maintainer scope .*; bob holds contributor/, 'forbidden');
    await refused(f.store.claim(review.id, 'alice'), /needs maintainer scope/, 'forbidden');
    expect((await f.store.queryClaimable(laneId, 'bob')).map((c) => c.ask.id)).toEqual([]);
    expect((await f.store.queryClaimable(laneId, 'mia')).map((c) => c.ask.id)).toEqual([review.id]);
    const claim = await f.store.claim(review.id, 'mia');
    expect((await f.store.answer({ ask_id: review.id, fence: claim.fence, answer: 'grant' }, 'mia')).answer).toBe('grant');

    const second = await post('changeset_review', 'second');
    const rita = await f.store.claim(second.id, 'rita');
    await refused(f.store.answer({ ask_id: second.id, fence: rita.fence, answer: 'complete' }, 'rita'), /answered with grant or deny, not complete/);
    expect((await f.store.answer({ ask_id: second.id, fence: rita.fence, answer: 'deny' }, 'rita')).answer).toBe('deny');
  });

  it('only coordinators claim and answer submit_changeset', async () => {
    const submit = await post('submit_changeset');
    await refused(f.store.claim(submit.id, 'bob'), /needs coordinator scope/, 'forbidden');
    await refused(f.store.claim(submit.id, 'mia'), /needs coordinator scope/, 'forbidden');
    await refused(f.store.queryClaimable(laneId, 'bob', { kind: 'submit_changeset' }), /submit_changeset asks need coordinator scope/, 'forbidden');
    const claim = await f.store.claim(submit.id, 'alice');
    expect((await f.store.answer({ ask_id: submit.id, fence: claim.fence, answer: 'complete' }, 'alice')).state).toBe('answered');
    const byOwner = await post('submit_changeset', 'by owner');
    expect((await f.store.claim(byOwner.id, 'olga')).fence).toBe(1);
  });

  it('contributor kinds are open to anyone: work, resolve_conflict, question', async () => {
    for (const kind of ['work', 'resolve_conflict', 'question']) {
      const ask = await post(kind);
      const claim = await f.store.claim(ask.id, 'bob');
      await f.store.answer({ ask_id: ask.id, fence: claim.fence, answer: 'complete' }, 'bob');
    }
  });

  it('scope is checked again at answer time: a revoked maintainer cannot answer a review it holds', async () => {
    const review = await post('changeset_review');
    const claim = await f.store.claim(review.id, 'mia');
    expect(await f.store.revokeRole({ repo: REPO, principal: 'mia', role: 'maintainer', lane_id: laneId }, 'olga')).toBe(true);
    await refused(f.store.answer({ ask_id: review.id, fence: claim.fence, answer: 'grant' }, 'mia'), /answering .* needs maintainer scope/, 'forbidden');
  });

  it('declared kinds carry their own scope and answers', async () => {
    const approval = await post('release_approval');
    await refused(f.store.claim(approval.id, 'bob'), /needs maintainer scope/);
    const claim = await f.store.claim(approval.id, 'rita');
    expect((await f.store.answer({ ask_id: approval.id, fence: claim.fence, answer: 'grant' }, 'rita')).answer).toBe('grant');
  });

  it('only owners grant and revoke roles; the last owner stays', async () => {
    await refused(f.store.grantRole({ repo: REPO, principal: 'bob', role: 'maintainer' }, 'alice'), /granting maintainer needs owner scope on acme\/widgets; alice is not an owner/, 'forbidden');
    await refused(f.store.grantRole({ repo: REPO, principal: 'bob', role: 'owner' }, 'rita'), /needs owner scope/);
    await refused(f.store.revokeRole({ repo: REPO, principal: 'olga', role: 'owner' }, 'olga'), /last owner of acme\/widgets; grant another owner first/);
    await f.store.grantRole({ repo: REPO, principal: 'bob', role: 'coordinator', lane_id: laneId }, 'olga');
    expect(await f.store.scopesOn(laneId, 'bob')).toContain('coordinator');
    await expect(f.store.grantRole({ repo: REPO, principal: 'bob', role: 'coordinator' }, 'olga')).rejects.toThrow(/coordinator role belongs to one lane/);
    await refused(f.store.grantRole({ repo: 'acme/other', principal: 'bob', role: 'maintainer', lane_id: laneId }, 'olga'), /needs owner scope on acme\/other/);
    await f.store.seedOwner('acme/other', 'olga');
    await refused(f.store.grantRole({ repo: 'acme/other', principal: 'bob', role: 'maintainer', lane_id: laneId }, 'olga'), /is in acme\/widgets, not acme\/other/);
    expect((await f.store.listRoles(REPO)).map((r) => `${r.principal}:${r.role}:${r.lane_id ?? '*'}`)).toEqual([
      `alice:coordinator:${laneId}`,
      `bob:coordinator:${laneId}`,
      `mia:maintainer:${laneId}`,
      'olga:owner:*',
      'rita:maintainer:*',
    ]);
  });

  it('lane state changes need coordinator scope and follow the lifecycle; every change is an event', async () => {
    await refused(f.store.setLaneState(laneId, 'active', 'bob'), /moving .* to active needs coordinator scope/, 'forbidden');
    await f.store.setLaneState(laneId, 'active', 'alice');
    await f.store.setLaneState(laneId, 'done', 'olga', 'shipped');
    await refused(f.store.setLaneState(laneId, 'active', 'alice'), /is done; it can move to no other state/);
    await refused(f.store.postAsk({ lane_id: laneId, kind: 'work', title: 'late' }, 'bob'), /is done; post the ask in a working lane/);
    const lane = await f.store.getLane(laneId);
    expect(lane.history.map((e) => [e.type, e.actor, e.detail['to'] ?? null])).toEqual([
      ['proposed', 'alice', null],
      ['state_changed', 'alice', 'active'],
      ['state_changed', 'olga', 'done'],
    ]);
  });

  it('related lanes: either coordinator records the link, once, within one repo', async () => {
    const split = await f.store.proposeLane({ repo: REPO, title: 'split off', paths: ['src/parser/**'], priority: 2 }, 'bob');
    await refused(f.store.addRelated(laneId, split.id, 'mia'), /needs coordinator scope on .* ask alice to record it/, 'forbidden');
    await f.store.addRelated(laneId, split.id, 'bob');
    const lane = await f.store.addRelated(laneId, split.id, 'alice');
    expect(lane.related_lanes).toEqual([split.id]);
    expect(lane.history.filter((e) => e.type === 'related_added')).toHaveLength(1);
    const foreign = await f.store.proposeLane({ repo: 'acme/other', title: 'x' }, 'alice');
    await refused(f.store.addRelated(laneId, foreign.id, 'alice'), /related lanes share a repo/);
    const listed = await f.store.listLanes(REPO);
    expect(listed.map((l) => l.id)).toEqual([split.id, laneId]);
    expect(listed[0]).toMatchObject({ paths: ['src/parser/**'], priority: 2 });
    expect(await f.store.listLanes(REPO, { state: 'active' })).toEqual([]);
  });
});
