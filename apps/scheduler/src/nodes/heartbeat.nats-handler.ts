import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { decodeMessage, HeartbeatSchema, Subjects } from '@mnemo/proto';
import { JsonLogger, NatsEndpoints } from '@mnemo/service-kit';
import { RecordHeartbeatCommand } from './record-heartbeat.command.js';
import { RecordHeartbeatUseCase } from './record-heartbeat.use-case.js';

/** HEARTBEAT → RecordHeartbeatUseCase. No queue group: every scheduler replica needs every heartbeat. */
@Injectable()
export class HeartbeatNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(RecordHeartbeatUseCase) private readonly useCase: RecordHeartbeatUseCase,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.endpoints.listen(Subjects.HEARTBEAT, (msg) => {
      let hb;
      try {
        hb = decodeMessage(HeartbeatSchema, msg.data);
      } catch (e) {
        this.logger.emit('warn', 'malformed heartbeat ignored', { err: String(e) });
        return;
      }
      this.useCase.execute(new RecordHeartbeatCommand(hb));
    });
  }
}
