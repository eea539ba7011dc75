import { bootOrExit } from '@mnemo/service-kit';
import { startNodeManager } from './app.js';

bootOrExit('node-manager', () => startNodeManager(process.env));
