export * from './errors.js';
export * from './random.js';
export * from './sample.js';
export * from './layout-set.js';
