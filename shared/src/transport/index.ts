export * from './http.js';
export * from './stdio.js';
export * from './options.js';
export * from './cli.js';
export * from './json-rpc.js';
export * from './stream-lines.js';
export * from './http-extensions.js';
