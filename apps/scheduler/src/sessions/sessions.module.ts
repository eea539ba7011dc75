import { Module } from '@nestjs/common';
import { SESSION_TABLE, sessionTableProvider } from './session-table.provider.js';

/** Sessions the scheduler has seen: their last node (sticky routing) and chunk keys (advisories). */
@Module({
  providers: [sessionTableProvider],
  exports: [SESSION_TABLE],
})
export class SessionsModule {}
