import type { ConsolePage } from '../page.js';
import { approvalsPage } from './approvals.js';

/** The console's pages, in the navigation's order; the first with slug `''` is the front page. */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  approvalsPage,
];
