export * from './schema.js';
export * from './gate.js';
