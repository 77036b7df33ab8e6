export * from './neutralize.js';
export * from './wrap.js';
export * from './result.js';
