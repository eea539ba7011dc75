export * from './conversation.trace.js';
export * from './figures.js';
export * from './metrics.scrape.js';
export * from './plot.js';
export * from './swiftcache.settings.js';
export * from './house/house.map.js';
export * from './house/house.files.js';
