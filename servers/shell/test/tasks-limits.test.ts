import { afterEach, describe, expect, it } from 'vitest';
import { eventually, taskHarness, type TaskHarness } from './task-helpers.js';

/** The task ids a notification block lists, in order. */
function reportedIds(block: string | undefined): string[] {
  return [...(block ?? '').matchAll(/^- (bash_\d+) /gm)].map((match) => match[1]!);
}

describe('task limits and notifications', () => {
  let harness: TaskHarness;
  afterEach(async () => harness.close());

  it('runs 100 tasks at once, refuses the 101st, and reports each end exactly once', async () => {
    harness = taskHarness({ maxTasks: 100, maxFinishedTasks: 100 });
    const ids = Array.from({ length: 100 }, () => harness.run('sleep 2').id);
    expect(new Set(ids).size).toBe(100);
    expect(harness.manager.list().filter((task) => task.state === 'running')).toHaveLength(100);
    expect(() => harness.run('true')).toThrow(
      'Refused: 100 background tasks are running, the most allowed at once (limits.max_background_tasks in shell_policy.yaml). See them with list_tasks {} and stop one with shell_kill {"task_id":"bash_<n>"}, or wait for one with wait_task.',
    );

    const reported: string[] = [];
    await eventually(() => {
      reported.push(...reportedIds(harness.manager.takeNotifications()));
      return reported.length >= 100;
    }, 30_000);
    expect(reported.toSorted()).toEqual(ids.toSorted());
    expect(harness.manager.takeNotifications()).toBeUndefined();
    expect(harness.manager.list().every((task) => task.state === 'exited' && task.exitCode === 0)).toBe(true);
    // Finished tasks no longer count against the limit, and the refused start used no id.
    expect(harness.run('true').id).toBe('bash_101');
  });

  it('refuses every task when the policy allows none', () => {
    harness = taskHarness({ maxTasks: 0 });
    expect(() => harness.run('true')).toThrow(/background tasks are off \(limits.max_background_tasks is 0/);
  });

  it('delivers each notification once, in a block that says how to read the log', async () => {
    harness = taskHarness();
    const ok = harness.run('echo fine', { description: 'say fine' });
    const failing = harness.run('exit 4');
    await eventually(() => harness.manager.list().every((task) => task.state !== 'running'));

    const block = harness.manager.takeNotifications();
    expect(block).toMatch(/^<task-notification>\n2 background tasks ended:\n/);
    expect(block).toContain(`- ${ok.id} "say fine" exited with code 0 after `);
    expect(block).toContain(`; log 5 B; read it with task_output {"task_id":"${ok.id}"}`);
    expect(block).toContain(`- ${failing.id} "exit 4" exited with code 4 after `);
    expect(block).toMatch(/<\/task-notification>$/);
    expect(harness.manager.takeNotifications()).toBeUndefined();

    const later = harness.run('true');
    await eventually(() => harness.manager.list().every((task) => task.state !== 'running'));
    expect(reportedIds(harness.manager.takeNotifications())).toEqual([later.id]);
  });

  it('leaves out of notifications the ends a result already showed: kill and wait', async () => {
    harness = taskHarness();
    const killed = harness.run('sleep 30');
    const waited = harness.run('true');
    const unseen = harness.run('true');
    await harness.manager.kill(killed.id);
    await harness.manager.wait(waited.id, 10_000);
    await eventually(() => harness.manager.list()[2]!.state === 'exited');
    expect(reportedIds(harness.manager.takeNotifications())).toEqual([unseen.id]);
  });

  it('says when an ended task was forgotten before it was reported', async () => {
    harness = taskHarness({ maxFinishedTasks: 1 });
    harness.run('true');
    harness.run('sleep 0.2');
    await eventually(() => harness.manager.list().length === 1 && harness.manager.list()[0]!.state === 'exited');

    const block = harness.manager.takeNotifications()!;
    expect(block).toContain('- bash_1 "true" exited with code 0 after');
    expect(block).toContain('its log is no longer kept (too many finished tasks)');
    expect(block).toContain('read it with task_output {"task_id":"bash_2"}');
  });
});
