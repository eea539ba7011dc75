export * from './conversation.trace.js';
export * from './figures.js';
export * from './metrics.scrape.js';
export * from './plot.js';
export * from './swiftcache.settings.js';
