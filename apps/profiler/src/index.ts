export { startProfiler, type ProfilerHandle } from './app.js';
export { profilerSchema, type ProfilerConfig } from './config/profiler.config.js';
