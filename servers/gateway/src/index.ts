export * from './search/index.js';
export * from './gateway.js';
export * from './catalog.js';
export * from './load.js';
export * from './pins.js';
export * from './config/schema.js';
export * from './downstream/downstream.js';
