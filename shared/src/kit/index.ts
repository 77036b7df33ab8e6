export * from './compose.js';
export * from './define-tool.js';
export * from './context.js';
export * from './results.js';
export * from './gate.js';
export * from './call-state.js';
export * from './validate.js';
export * from './server.js';
