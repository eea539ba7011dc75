import { bootOrExit } from '@mnemo/service-kit';
import { startScheduler } from './app.js';

bootOrExit('scheduler', () => startScheduler(process.env));
