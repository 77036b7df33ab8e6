import type { RelayContext } from './context.js';

/**
 * Bounded wait for servers on their first start, as tools/list waits (list_wait_ms), so that a
 * client's first look sees what they offer; one slower than that appears later, with list_changed.
 */
export async function firstStarts(context: RelayContext): Promise<void> {
  const starting = [...context.downstreams.values()].filter((downstream) => downstream.firstStarting);
  if (starting.length === 0 || context.config.list_wait_ms === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(starting.map((downstream) => downstream.firstAttempt)), new Promise((resolve) => (timer = setTimeout(resolve, context.config.list_wait_ms)))]);
  clearTimeout(timer);
}
