import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ListModelRecordsRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { ProfilerResponder } from '../nats/profiler.responder.js';
import { ListModelRecordsUseCase } from './list-model-records.use-case.js';
import { toModelRecord } from './model-record.mapper.js';
import { RegisterModelCommand } from './register-model.command.js';
import { RegisterModelUseCase } from './register-model.use-case.js';

/** NATS entry points of the model registry: map the request to a command, call the use case. */
@Injectable()
export class ModelsNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(ProfilerResponder) private readonly responder: ProfilerResponder,
    @Inject(RegisterModelUseCase) private readonly registerModel: RegisterModelUseCase,
    @Inject(ListModelRecordsUseCase) private readonly listModels: ListModelRecordsUseCase,
  ) {}

  onApplicationBootstrap(): void {
    this.responder.serve(Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, async (req) => {
      const model = await this.registerModel.execute(RegisterModelCommand.from(req));
      return { case: 'model', value: toModelRecord(model) };
    });
    this.responder.serve(Subjects.PROFILER_MODELS_LIST, ListModelRecordsRequestSchema, async () => {
      const models = await this.listModels.execute();
      return { case: 'models', value: { models: models.map(toModelRecord) } };
    });
  }
}
