export * from './addresses.js';
export * from './guard.js';
