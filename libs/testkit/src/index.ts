export * from './figures.js';
export * from './metrics.scrape.js';
