import { encodeMessage, ListModelsReplySchema, QueueGroups, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { ListClusterModelsUseCase } from './list-cluster-models.use-case.js';

/** MODELS_LIST (queue group `scheduler`) → ListClusterModelsUseCase → ListModelsReply. The request body is empty. */
export const ModelsNatsHandler = natsEntryPoints('ModelsNatsHandler', [ListClusterModelsUseCase], (nats, useCase) => {
  nats.listen(
    Subjects.MODELS_LIST,
    () => nats.metrics.time('models_list', async () => encodeMessage(ListModelsReplySchema, { models: useCase.execute() })),
    QueueGroups.SCHEDULER,
  );
});
