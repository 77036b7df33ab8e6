export * from './types.js';
export * from './consoles.js';
export * from './desk.js';
export * from './notify.js';
export * from './store.js';
export * from './policy-rule.js';
export { clockTime, minuteTime, shellWord } from './wording.js';
