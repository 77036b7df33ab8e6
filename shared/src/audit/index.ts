export * from './redact.js';
export * from './chain.js';
export * from './entry.js';
export * from './log.js';
export * from './verify.js';
export * from './receipts.js';
export * from './layout.js';
