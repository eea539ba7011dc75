export * from './config.loader.js';
export * from './json.logger.js';
export * from './metrics.registry.js';
export * from './ops.server.js';
export * from './nats.connection.js';
export * from './boot.js';
export * from './run-once.js';
