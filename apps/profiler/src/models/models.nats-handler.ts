import { ListModelRecordsRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { serveProfilerRequest } from '../nats/profiler.responder.js';
import { ListModelRecordsUseCase } from './list-model-records.use-case.js';
import { toModelRecord } from './model-record.mapper.js';
import { RegisterModelCommand } from './register-model.command.js';
import { RegisterModelUseCase } from './register-model.use-case.js';

/** NATS entry points of the model registry: map the request to a command, call the use case. */
export const ModelsNatsHandler = natsEntryPoints(
  'ModelsNatsHandler',
  [RegisterModelUseCase, ListModelRecordsUseCase],
  (nats, registerModel, listModels) => {
    serveProfilerRequest(nats, Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, async (req) => {
      const model = await registerModel.execute(RegisterModelCommand.from(req));
      return { case: 'model', value: toModelRecord(model) };
    });
    serveProfilerRequest(nats, Subjects.PROFILER_MODELS_LIST, ListModelRecordsRequestSchema, async () => {
      const models = await listModels.execute();
      return { case: 'models', value: { models: models.map(toModelRecord) } };
    });
  },
);
