export * from './workspace.js';
export * from './in-process.js';
export * from './process.js';
export * from './inventory.js';
export * from './tool-call.js';
