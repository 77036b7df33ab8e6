/**
 * Every process group the gateway started (downstream servers, hook commands), so that any exit
 * of the gateway, even an abrupt one, ends them and all their children.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

export function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) killGroup(group);
    });
  }
  liveGroups.add(pid);
}

export function untrackGroup(pid: number): void {
  liveGroups.delete(pid);
}
