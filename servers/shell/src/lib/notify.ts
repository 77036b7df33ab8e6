import type { ToolReply } from '@bulkhead/core';
import type { TaskManager } from '../tasks/task-manager.js';

/** A reply with the news of background tasks that ended since the last reply, so the model need not poll. */
export function withTaskNotifications<S>(tasks: TaskManager, reply: ToolReply<S>): ToolReply<S> {
  const news = tasks.takeNotifications();
  return news === undefined ? reply : { ...reply, content: [...reply.content, { type: 'text', text: news }] };
}
