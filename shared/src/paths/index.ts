export * from './globs.js';
export * from './protected.js';
export * from './roots.js';
export * from './files.js';
export * from './tree.js';
export * from './move.js';
export * from './path-values.js';
export * from './private-folders.js';
