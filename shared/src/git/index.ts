export * from './arguments.js';
export * from './hardening.js';
export * from './layout.js';
export * from './names.js';
export * from './process.js';
export * from './repository.js';
export * from './tokens.js';
