export * from './http.js';
export * from './stdio.js';
export * from './options.js';
export * from './cli.js';
