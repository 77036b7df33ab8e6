export * from './yaml-file.js';
export * from './policy.js';
export * from './audit-policy.js';
export * from './json-schema.js';
