export * from './quantiles.js';
export * from './linear.solve.js';
