export * from './peer-source.policy.js';
