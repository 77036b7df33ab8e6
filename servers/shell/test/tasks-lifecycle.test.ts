import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolError } from '@bulkhead/core';
import type { EndedTask } from '../src/tasks/notifications.js';
import { eventually, processesWithMarker, taskHarness, type TaskHarness } from './task-helpers.js';

/** A group whose inner bash ignores SIGTERM, so only the SIGKILL after the grace period ends it. */
function stubbornCommand(marker: string): string {
  return `bash -c 'trap "" TERM; echo ready; while :; do sleep 0.05; done; : ${marker}' & wait`;
}

describe('task lifecycle', () => {
  let harness: TaskHarness;
  afterEach(async () => harness.close());

  it('returns a bash_<n> handle at once, counting from 1', () => {
    harness = taskHarness();
    const started = performance.now();
    const first = harness.run('sleep 5', { description: 'a long sleep' });
    const second = harness.run('sleep 5');
    expect(performance.now() - started).toBeLessThan(500);
    expect(first).toMatchObject({ id: 'bash_1', state: 'running', description: 'a long sleep', exitCode: null });
    expect(second.id).toBe('bash_2');
  });

  it('waits with a timeout, leaving the task running, and then to the end', async () => {
    harness = taskHarness();
    const { id } = harness.run('sleep 0.6; exit 3');

    const early = await harness.manager.wait(id, 100);
    expect(early).toMatchObject({ timedOut: true, task: { state: 'running' } });
    expect(harness.manager.list()[0]!.state).toBe('running');

    const finished = await harness.manager.wait(id, 10_000);
    expect(finished).toMatchObject({ timedOut: false, task: { state: 'exited', exitCode: 3 } });
    expect(finished.task.endedAt).toBeInstanceOf(Date);
  });

  it('gives up a cancelled wait and leaves the task running', async () => {
    harness = taskHarness();
    const { id } = harness.run('sleep 30');
    const controller = new AbortController();
    const waiting = harness.manager.wait(id, 30_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow(/cancelled; bash_1 keeps running/);
    expect(harness.manager.list()[0]!.state).toBe('running');
  });

  it('kills the whole group, a child ignoring SIGTERM included, and keeps the log', async () => {
    harness = taskHarness();
    const marker = `stubborn-${process.pid}-${Date.now()}`;
    const { id } = harness.run(stubbornCommand(marker));
    await eventually(() => harness.manager.output(id).text.includes('ready'));
    expect(processesWithMarker(marker).length).toBeGreaterThan(0);

    const killed = await harness.manager.kill(id);
    expect(killed).toMatchObject({ wasRunning: true, task: { state: 'killed' } });
    expect(processesWithMarker(marker)).toEqual([]);
    expect(harness.manager.output(id)).toMatchObject({ text: 'ready\n', nextOffset: null });

    const again = await harness.manager.kill(id);
    expect(again.wasRunning).toBe(false);
  });

  it('stops a task at its own timeout and says so', async () => {
    harness = taskHarness();
    const { id } = harness.run('sleep 30', { timeoutMs: 200 });
    const { task } = await harness.manager.wait(id, 10_000);
    expect(task.state).toBe('timed out');
    expect(harness.manager.takeNotifications()).toBeUndefined();
  });

  it('lists every task with its state, exit code, times and log size', async () => {
    harness = taskHarness();
    const long = `echo start; sleep 30; : ${'x'.repeat(300)}`;
    harness.run(long);
    const { id } = harness.run('printf abc; exit 2');
    await harness.manager.wait(id, 10_000);

    const [running, exited] = harness.manager.list();
    expect(running).toMatchObject({ id: 'bash_1', state: 'running', exitCode: null, endedAt: undefined });
    expect(running!.command).toBe(`${long.slice(0, 200)}…`);
    expect(exited).toMatchObject({ id: 'bash_2', state: 'exited', exitCode: 2, logBytes: 3, command: 'printf abc; exit 2' });
    expect(exited!.endedAt!.getTime()).toBeGreaterThanOrEqual(exited!.startedAt.getTime());
  });

  it('closeAll leaves no process alive and refuses new tasks', async () => {
    harness = taskHarness();
    const marker = `closeall-${process.pid}-${Date.now()}`;
    const ids = [harness.run(stubbornCommand(marker)).id, harness.run(`sleep 30; : ${marker}`).id, harness.run(`sleep 30; : ${marker}`).id];
    await eventually(() => processesWithMarker(marker).length >= 3);

    await harness.manager.closeAll();
    expect(processesWithMarker(marker)).toEqual([]);
    expect(harness.manager.list().filter((task) => ids.includes(task.id)).map((task) => task.state)).toEqual(['killed', 'killed', 'killed']);
    expect(() => harness.run('true')).toThrow(/shutting down/);
  });

  it('writes logs 0600 in folders 0700', () => {
    harness = taskHarness();
    const { logFile } = harness.run('true');
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(logFile)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(dirname(logFile))).mode & 0o777).toBe(0o700);
  });

  it('makes no log folder until the first task starts', async () => {
    harness = taskHarness();
    const tasksDir = join(harness.ws.path('state'), 'tasks');
    expect(existsSync(tasksDir)).toBe(false);
    await harness.manager.wait(harness.run('true').id, 10_000);
    expect(readdirSync(tasksDir).filter((name) => name.startsWith(`${process.pid}-`))).toHaveLength(1);
  });

  it('removes the log folders of servers that are gone, and only those', async () => {
    harness = taskHarness();
    const tasksDir = join(harness.ws.path('state'), 'tasks');
    const deadPid = spawnSync('true').pid!;
    mkdirSync(join(tasksDir, `${deadPid}-old`), { recursive: true });
    // Each server makes its own folder with its first task, clearing those of servers that are gone.
    await harness.manager.wait(harness.run('true').id, 10_000);
    const sharing = taskHarness({ stateDir: harness.ws.path('state') });
    await sharing.manager.wait(sharing.run('true').id, 10_000);
    await sharing.close();
    expect(readdirSync(tasksDir).filter((name) => name.startsWith(`${deadPid}-`))).toEqual([]);
    expect(readdirSync(tasksDir).filter((name) => name.startsWith(`${process.pid}-`))).toHaveLength(2);
  });

  it('names the known tasks when asked for an unknown or forgotten one', async () => {
    harness = taskHarness({ maxFinishedTasks: 1 });
    const first = harness.run('true');
    await harness.manager.wait(first.id, 10_000);
    const second = harness.run('true');
    await harness.manager.wait(second.id, 10_000);

    expect(existsSync(first.logFile)).toBe(false);
    expect(() => harness.manager.output('bash_1')).toThrow(/bash_1 ended and was forgotten: only the last 1 finished tasks are kept\. Known tasks: bash_2\./);
    expect(() => harness.manager.output('bash_9')).toThrow(/There is no task bash_9\. Known tasks: bash_2\./);
    expect(() => harness.manager.output('task 1')).toThrow(/"task 1" is not a task id: ids look like bash_1/);
    await expect(harness.manager.wait('bash_9', 10)).rejects.toThrow(ToolError);
    await expect(harness.manager.kill('bash_9')).rejects.toThrow(ToolError);
    expect(() => harness.manager.output('bash_0')).toThrow(/is not a task id/);
    await expect(harness.manager.wait('bash_2', 10 ** 12)).rejects.toThrow(/timeout_ms must be a whole number from 0 to 86400000/);
  });

  it('shows only the newest few ids in errors when many tasks are known', async () => {
    harness = taskHarness();
    const ids = Array.from({ length: 7 }, () => harness.run('true').id);
    await Promise.all(ids.map((id) => harness.manager.wait(id, 10_000)));
    await expect(harness.manager.kill('bash_99')).rejects.toThrow('There is no task bash_99. Newest tasks: bash_7, bash_6, bash_5, bash_4, bash_3; list_tasks {} shows all 7.');
  });

  it('calls onTaskEnd once for every end, kills included', async () => {
    const ended: EndedTask[] = [];
    harness = taskHarness({ onTaskEnd: (entry) => ended.push(entry) });
    const quick = harness.run('exit 1');
    const slow = harness.run('sleep 30');
    await harness.manager.wait(quick.id, 10_000);
    await harness.manager.kill(slow.id);
    expect(ended.map(({ task }) => [task.id, task.state])).toEqual([
      ['bash_1', 'exited'],
      ['bash_2', 'killed'],
    ]);
  });
});
