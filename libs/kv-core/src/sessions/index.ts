export { SessionTable, type SessionRecord } from './session.table.js';
