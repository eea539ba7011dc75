import { bootOrExit } from '@mnemo/service-kit';
import { startNodeManager } from './bootstrap/app.js';

bootOrExit('node-manager', () => startNodeManager(process.env));
