export * from './sim-cost.model.js';
export * from './sim-token.stream.js';
export * from './sim.engine.js';
