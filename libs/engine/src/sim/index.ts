export * from './sim-cost.model.js';
export * from './sim-token.stream.js';
export * from './sim.engine.js';
export * from './sim-kv.content.js';
export * from './sim-kv.restore.js';
