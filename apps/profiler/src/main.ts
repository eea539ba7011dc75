import { bootOrExit } from '@mnemo/service-kit';
import { startProfiler } from './app.js';

bootOrExit('profiler', () => startProfiler(process.env));
