export * from './quantiles.js';
