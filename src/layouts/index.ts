export * from './errors.js';
export * from './random.js';
export * from './sample.js';
export * from './layout-set.js';
export * from './geometry-check.js';
export * from './top-view.js';
