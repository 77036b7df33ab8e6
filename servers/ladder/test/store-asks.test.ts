import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO, refused, START, STORE_BACKENDS, storeFixture, type StoreFixture } from './store-fixture.js';

const MINUTE = 60_000;

describe.each(STORE_BACKENDS)('asks on %s: lifecycle, leases, fencing, dependencies', (backend) => {
  let f: StoreFixture;
  let laneId: string;
  beforeEach(async () => {
    f = await storeFixture(backend);
    laneId = (await f.store.proposeLane({ repo: REPO, title: 'Parser rewrite', goal: 'faster parse' }, 'alice')).id;
  });
  afterEach(() => f.cleanup());

  const post = async (title: string, extra: Record<string, unknown> = {}, actor = 'alice') =>
    (await f.store.postAsk({ lane_id: laneId, kind: 'work', title, ...extra }, actor)).ask;

  it('runs the full lifecycle with dependencies: only unblocked asks are claimable, in priority then age order', async () => {
    const design = await post('design', { priority: 1 });
    const build = await post('build', { depends_on: [design.id], priority: 0 });
    const docs = await post('docs', { priority: 1 });
    expect(design.id).toMatch(/^ask-[0-9a-f]{10}$/);
    expect(build.waiting_on).toEqual([design.id]);

    let claimable = await f.store.queryClaimable(laneId, 'bob');
    expect(claimable.map((c) => c.ask.id)).toEqual([design.id, docs.id]);
    expect(claimable[0]?.why).toMatch(/open; it has no dependencies; work needs contributor scope/);

    await refused(f.store.claim(build.id, 'bob'), new RegExp(`waiting on ${design.id} \\(open\\)`), 'waiting');
    const claim = await f.store.claim(design.id, 'bob');
    expect(claim).toMatchObject({ fence: 1, renewed: false, lease_until: new Date(START + 15 * MINUTE).toISOString() });
    expect(claim.ask).toMatchObject({ state: 'claimed', holder: 'bob', attempts: 1 });
    await refused(f.store.claim(build.id, 'bob'), new RegExp(`waiting on ${design.id} \\(claimed\\)`));

    const answered = await f.store.answer({ ask_id: design.id, fence: 1, answer: 'complete', note: 'see doc' }, 'bob');
    expect(answered).toMatchObject({ state: 'answered', answer: 'complete', answered_by: 'bob', holder: null, lease_until: null });

    claimable = await f.store.queryClaimable(laneId, 'carol');
    expect(claimable.map((c) => c.ask.id)).toEqual([build.id, docs.id]);
    expect(claimable[0]?.why).toContain(`its dependencies ${design.id} are answered`);
    const buildClaim = await f.store.claim(build.id, 'carol');
    await f.store.answer({ ask_id: build.id, fence: buildClaim.fence, answer: 'complete' }, 'carol');
    await refused(f.store.claim(build.id, 'dave'), /already answered complete by carol; nothing to claim/);

    const history = await f.store.getAsk(design.id);
    expect(history.history.map((e) => [e.type, e.actor, e.fence])).toEqual([
      ['posted', 'alice', null],
      ['claimed', 'bob', 1],
      ['answered', 'bob', 1],
    ]);
  });

  it('claimNext takes the most urgent claimable ask in one call', async () => {
    const low = await post('low', { priority: 7 });
    const urgent = await post('urgent', { priority: 0 });
    expect((await f.store.claimNext(laneId, 'bob'))?.ask.id).toBe(urgent.id);
    expect((await f.store.claimNext(laneId, 'carol'))?.ask.id).toBe(low.id);
    expect(await f.store.claimNext(laneId, 'dave')).toBeUndefined();
  });

  it('claim events say who held the ask before: a renewal, a lapsed lease taken back by claimNext, a released ask', async () => {
    const ask = await post('task');
    await f.store.claim(ask.id, 'bob', { lease_seconds: 60 });
    await f.store.claim(ask.id, 'bob', { lease_seconds: 120 });
    f.advance(3 * MINUTE);
    const taken = await f.store.claimNext(laneId, 'carol', { lease_seconds: 60 });
    expect(taken).toMatchObject({ fence: 2, renewed: false, ask: { id: ask.id, holder: 'carol', attempts: 2 } });
    await f.store.release(ask.id, 2, 'carol');
    const again = await f.store.claimNext(laneId, 'dave');
    expect(again?.fence).toBe(3);
    const history = (await f.store.getAsk(ask.id)).history;
    expect(history.map((event) => [event.type, event.actor, event.fence, event.detail])).toEqual([
      ['posted', 'alice', null, { kind: 'work', priority: 5, depends_on: [] }],
      ['claimed', 'bob', 1, { lease_until: new Date(START + MINUTE).toISOString() }],
      ['renewed', 'bob', 1, { lease_until: new Date(START + 2 * MINUTE).toISOString() }],
      ['claimed', 'carol', 2, { lease_until: new Date(START + 4 * MINUTE).toISOString(), superseded_fence: 1, previous_holder: 'bob' }],
      ['released', 'carol', 2, {}],
      ['claimed', 'dave', 3, { lease_until: new Date(START + 18 * MINUTE).toISOString() }],
    ]);
  });

  it('expires leases by the injected clock; re-claiming renews the live lease and keeps the fence', async () => {
    const ask = await post('task');
    const first = await f.store.claim(ask.id, 'bob', { lease_seconds: 600 });
    f.advance(5 * MINUTE);
    const renewed = await f.store.claim(ask.id, 'bob', { lease_seconds: 600 });
    expect(renewed).toMatchObject({ fence: first.fence, renewed: true, lease_until: new Date(START + 15 * MINUTE).toISOString() });
    expect(renewed.ask.attempts).toBe(1);

    await refused(f.store.claim(ask.id, 'carol'), /claimed by bob until 2026-01-05T12:15:00.000Z \(fence 1\)/, 'claimed');
    expect(await f.store.queryClaimable(laneId, 'carol')).toEqual([]);
    f.advance(10 * MINUTE); // exactly at lease_until: still bob's
    await refused(f.store.claim(ask.id, 'carol'), /claimed by bob/);
    f.advance(1);
    const [lapsed] = await f.store.queryClaimable(laneId, 'carol');
    expect(lapsed?.why).toMatch(/the lease of bob \(fence 1\) lapsed at 2026-01-05T12:15:00.000Z/);
    const taken = await f.store.claim(ask.id, 'carol');
    expect(taken).toMatchObject({ fence: 2, renewed: false });
    expect(taken.ask.attempts).toBe(2);
    const events = (await f.store.getAsk(ask.id)).history;
    expect(events.at(-1)).toMatchObject({ type: 'claimed', actor: 'carol', fence: 2, detail: { superseded_fence: 1, previous_holder: 'bob' } });
  });

  it('fencing: the old holder cannot answer or release after a re-claim, and says who holds it', async () => {
    const ask = await post('task');
    await f.store.claim(ask.id, 'bob', { lease_seconds: 60 });
    f.advance(2 * MINUTE);
    const carol = await f.store.claim(ask.id, 'carol', { lease_seconds: 60 });
    await refused(
      f.store.answer({ ask_id: ask.id, fence: 1, answer: 'complete' }, 'bob'),
      new RegExp(`${ask.id} is claimed by carol until 2026-01-05T12:03:00.000Z; your claim \\(fence 1\\) was superseded by fence 2`),
      'stale_fence',
    );
    await refused(f.store.release(ask.id, 1, 'bob'), /superseded by fence 2/, 'stale_fence');
    // Even someone quoting the current fence cannot answer for the holder.
    await refused(f.store.answer({ ask_id: ask.id, fence: 2, answer: 'complete' }, 'bob'), /held by carol \(fence 2\), not bob/, 'forbidden');
    await refused(f.store.answer({ ask_id: ask.id, fence: 7, answer: 'complete' }, 'carol'), /no claim with fence 7; its current fence is 2/);
    expect((await f.store.answer({ ask_id: ask.id, fence: carol.fence, answer: 'complete' }, 'carol')).answered_by).toBe('carol');
  });

  it('the holder may still answer after its lease lapsed when nobody claimed the ask since', async () => {
    const ask = await post('task');
    const claim = await f.store.claim(ask.id, 'bob', { lease_seconds: 60 });
    f.advance(10 * MINUTE);
    expect((await f.store.answer({ ask_id: ask.id, fence: claim.fence, answer: 'complete' }, 'bob')).state).toBe('answered');
  });

  it('a holder re-claiming after its own lease lapsed gets a new fence and spends an attempt', async () => {
    const ask = await post('task');
    await f.store.claim(ask.id, 'bob', { lease_seconds: 60 });
    f.advance(2 * MINUTE);
    const again = await f.store.claim(ask.id, 'bob');
    expect(again).toMatchObject({ fence: 2, renewed: false });
    expect(again.ask.attempts).toBe(2);
  });

  it('release reopens the ask for others; a released claim cannot answer', async () => {
    const ask = await post('task');
    const claim = await f.store.claim(ask.id, 'bob');
    expect((await f.store.release(ask.id, claim.fence, 'bob')).state).toBe('open');
    await refused(f.store.answer({ ask_id: ask.id, fence: claim.fence, answer: 'complete' }, 'bob'), /is open again: your claim \(fence 1\) ended/);
    expect((await f.store.claim(ask.id, 'carol')).fence).toBe(2);
  });

  it('expires an ask after max_attempts failed attempts (releases and lapsed leases)', async () => {
    const ask = await post('flaky', { max_attempts: 3 });
    const first = await f.store.claim(ask.id, 'bob', { lease_seconds: 60 });
    await f.store.release(ask.id, first.fence, 'bob');
    await f.store.claim(ask.id, 'carol', { lease_seconds: 60 });
    f.advance(2 * MINUTE);
    const third = await f.store.claim(ask.id, 'dave', { lease_seconds: 60 });
    expect(third.ask.attempts).toBe(3);
    f.advance(2 * MINUTE);
    expect(await f.store.queryClaimable(laneId, 'erin')).toEqual([]);
    await refused(f.store.claim(ask.id, 'erin'), /expired: all 3 attempts were used without an answer/, 'expired');
    const expired = await f.store.getAsk(ask.id);
    expect(expired.state).toBe('expired');
    expect(expired.history.map((e) => e.type)).toEqual(['posted', 'claimed', 'released', 'claimed', 'claimed', 'expired']);

    const other = await post('released to death', { max_attempts: 1 });
    const only = await f.store.claim(other.id, 'bob');
    expect((await f.store.release(other.id, only.fence, 'bob')).state).toBe('expired');
  });

  it('the store default is 5 attempts', async () => {
    const ask = await post('default');
    expect(ask.max_attempts).toBe(5);
  });

  it('reports asks blocked by a denied, cancelled or expired dependency and never hands them out', async () => {
    const question = await f.store.postAsk({ lane_id: laneId, kind: 'question', title: 'which API?' }, 'alice');
    const dependent = await post('use the API', { depends_on: [question.ask.id] });
    const cancelledDependency = await post('to cancel');
    const dependentOfCancelled = await post('after cancelled', { depends_on: [cancelledDependency.id] });

    const claim = await f.store.claim(question.ask.id, 'bob');
    await f.store.answer({ ask_id: question.ask.id, fence: claim.fence, answer: 'deny', note: 'unknowable' }, 'bob');
    await f.store.cancel(cancelledDependency.id, 'alice', 'not needed');

    const blocked = await f.store.getAsk(dependent.id);
    expect(blocked).toMatchObject({ state: 'open', blocked_by: [question.ask.id], waiting_on: [] });
    expect((await f.store.getAsk(dependentOfCancelled.id)).blocked_by).toEqual([cancelledDependency.id]);
    expect(await f.store.queryClaimable(laneId, 'carol')).toEqual([]);
    await refused(f.store.claim(dependent.id, 'carol'), new RegExp(`blocked by ${question.ask.id} \\(denied\\); it will not become claimable by itself`), 'blocked');
    await refused(f.store.claim(dependentOfCancelled.id, 'carol'), new RegExp(`blocked by ${cancelledDependency.id} \\(cancelled\\)`), 'blocked');
  });

  it('idempotent posts: the same key from the same actor returns the first ask; another actor gets a new one', async () => {
    const first = await f.store.postAsk({ lane_id: laneId, kind: 'work', title: 'once', idempotency_key: 'k-1' }, 'alice');
    const again = await f.store.postAsk({ lane_id: laneId, kind: 'work', title: 'once (retried)', idempotency_key: 'k-1' }, 'alice');
    const other = await f.store.postAsk({ lane_id: laneId, kind: 'work', title: 'once', idempotency_key: 'k-1' }, 'bob');
    expect(first.replayed).toBe(false);
    expect(again).toMatchObject({ replayed: true, ask: { id: first.ask.id, title: 'once' } });
    expect(other.replayed).toBe(false);
    expect(other.ask.id).not.toBe(first.ask.id);
    expect(await f.store.listAsks(laneId)).toHaveLength(2);
  });

  it('refuses dependencies on unknown asks and on asks of another repo', async () => {
    await refused(post('x', { depends_on: ['ask-0000000000'] }), /no ask ask-0000000000; depends_on must name asks already posted/, 'not_found');
    const elsewhere = await f.store.proposeLane({ repo: 'acme/other', title: 'other' }, 'alice');
    const foreign = await f.store.postAsk({ lane_id: elsewhere.id, kind: 'work', title: 'foreign' }, 'alice');
    await refused(post('x', { depends_on: [foreign.ask.id] }), /is in acme\/other, not acme\/widgets/);
  });

  it('allows dependencies across lanes of one repo', async () => {
    const sibling = await f.store.proposeLane({ repo: REPO, title: 'sibling' }, 'alice');
    const upstream = await f.store.postAsk({ lane_id: sibling.id, kind: 'work', title: 'upstream' }, 'alice');
    const downstream = await post('downstream', { depends_on: [upstream.ask.id] });
    expect(downstream.waiting_on).toEqual([upstream.ask.id]);
  });

  it('refuses cycles, direct and longer, naming the path', async () => {
    const a = await post('a');
    const b = await post('b', { depends_on: [a.id] });
    const c = await post('c', { depends_on: [b.id] });
    await refused(f.store.addDependencies(a.id, [b.id], 'alice'), new RegExp(`${a.id} cannot depend on ${b.id}: that would close a cycle \\(${a.id} → ${b.id} → ${a.id}\\)`), 'cycle');
    await refused(f.store.addDependencies(a.id, [c.id], 'alice'), new RegExp(`\\(${a.id} → ${c.id} → ${b.id} → ${a.id}\\)`), 'cycle');
    await refused(f.store.addDependencies(a.id, [a.id], 'alice'), /would close a cycle/, 'cycle');
    const d = await post('d');
    expect((await f.store.addDependencies(a.id, [d.id], 'alice')).depends_on).toEqual([d.id]);
    expect((await f.store.getAsk(a.id)).history.at(-1)).toMatchObject({ type: 'dependencies_added', detail: { depends_on: [d.id] } });
  });

  it('validates inputs at the edge', async () => {
    await refused(f.store.postAsk({ lane_id: laneId, kind: 'dance', title: 'x' }, 'alice'), /unknown ask kind dance; known kinds: work, changeset_review/);
    await expect(f.store.postAsk({ lane_id: laneId, kind: 'work', title: 'x', priority: 12 }, 'alice')).rejects.toThrow();
    await refused(f.store.claim('ask-zzz', 'bob'), /no ask ask-zzz/, 'not_found');
    await refused(f.store.getLane('lane-0000000000'), /no lane lane-0000000000/, 'not_found');
  });

  it('assigned asks go only to their assignee', async () => {
    const ask = await post('for carol', { assignee: 'carol' });
    expect(await f.store.queryClaimable(laneId, 'bob')).toEqual([]);
    await refused(f.store.claim(ask.id, 'bob'), /assigned to carol; only they may claim it/, 'forbidden');
    expect((await f.store.queryClaimable(laneId, 'carol')).map((c) => c.ask.id)).toEqual([ask.id]);
  });

  it('answers must be allowed by the kind: grant only for reviews', async () => {
    const ask = await post('task');
    const claim = await f.store.claim(ask.id, 'bob');
    await refused(f.store.answer({ ask_id: ask.id, fence: claim.fence, answer: 'grant' }, 'bob'), /a work ask is answered with complete or deny, not grant/);
  });

  it('cancellation: poster or coordinator only; a cancelled ask is not answerable', async () => {
    const ask = await post('task', {}, 'bob');
    const claim = await f.store.claim(ask.id, 'carol');
    await refused(f.store.cancel(ask.id, 'carol'), /cancelling .* needs coordinator scope/, 'forbidden');
    expect((await f.store.cancel(ask.id, 'alice', 'superseded')).state).toBe('cancelled');
    await refused(f.store.answer({ ask_id: ask.id, fence: claim.fence, answer: 'complete' }, 'carol'), /is cancelled; nothing to answer/);
  });

  it('a paused lane hands nothing out and says whom to ask', async () => {
    const ask = await post('task');
    await f.store.setLaneState(laneId, 'paused', 'alice', 'waiting for a release');
    await refused(f.store.claim(ask.id, 'bob'), new RegExp(`${laneId} is paused; ask its coordinator alice to resume it`));
    await refused(f.store.queryClaimable(laneId, 'bob'), /is paused/);
  });
});
