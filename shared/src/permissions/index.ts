export * from './schema.js';
export * from './gate.js';
export * from './protected-arguments.js';
