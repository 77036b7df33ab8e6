import type { ConsolePage } from '../page.js';
import { activityPage } from './activity.js';
import { approvalsPage } from './approvals.js';
import { policyPage } from './policy.js';
import { quarantinePage } from './quarantine.js';
import { serversPage } from './servers.js';
import { trashPage } from './trash.js';

/** The console's pages, in the navigation's order; the first with slug `''` is the front page. */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  approvalsPage,
  activityPage,
  quarantinePage,
  serversPage,
  trashPage,
  policyPage,
];
