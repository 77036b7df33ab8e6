export * from './neutralize.js';
export * from './wrap.js';
export * from './scan.js';
export * from './result.js';
