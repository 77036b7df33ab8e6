export * from './types.js';
export * from './consoles.js';
