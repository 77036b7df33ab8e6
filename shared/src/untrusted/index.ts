export * from './neutralize.js';
export * from './wrap.js';
