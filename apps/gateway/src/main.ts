import { bootOrExit } from '@mnemo/service-kit';
import { startGateway } from './app.js';

bootOrExit('gateway', () => startGateway(process.env));
