export * from './reuse.pattern.js';
export * from './pattern.grid.js';
export * from './pareto.frontier.js';
export * from './plan.chooser.js';
export * from './cross-model.rule.js';
export * from './e-cache.keys.js';
export * from './base-prefix.route.js';
