import { decodeMessage, HeartbeatSchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { RecordHeartbeatCommand } from './record-heartbeat.command.js';
import { RecordHeartbeatUseCase } from './record-heartbeat.use-case.js';

/** HEARTBEAT → RecordHeartbeatUseCase. No queue group: every scheduler replica needs every heartbeat. */
export const HeartbeatNatsHandler = natsEntryPoints('HeartbeatNatsHandler', [RecordHeartbeatUseCase], (nats, useCase) => {
  nats.consume(
    Subjects.HEARTBEAT,
    'heartbeat',
    (data) => decodeMessage(HeartbeatSchema, data),
    (hb) => useCase.execute(new RecordHeartbeatCommand(hb)),
  );
});
