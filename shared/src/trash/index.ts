export * from './manifest.js';
export * from './policy.js';
export * from './trash.js';
