import { encodeMessage, PlanReplySchema, PlanRequestSchema, QueueGroups, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { toFrontierPoint } from '../profiling/frontier-point.mapper.js';
import { ChoosePlanCommand } from './choose-plan.command.js';
import { ChoosePlanUseCase, type PlanAnswer } from './choose-plan.use-case.js';

/** PROFILER_PLAN: PlanRequest → PlanReply (its own reply message, so nats.proto's envelope stays as it is). */
export const PlansNatsHandler = natsEntryPoints('PlansNatsHandler', [ChoosePlanUseCase], (nats, choose) => {
  nats.respond<typeof PlanRequestSchema, PlanAnswer>(Subjects.PROFILER_PLAN, {
    operation: 'plan',
    request: PlanRequestSchema,
    handle: (req) => choose.execute(ChoosePlanCommand.from(req)),
    reply: (o) =>
      'ok' in o
        ? encodeMessage(PlanReplySchema, {
            plan: o.ok.choice ? toFrontierPoint(o.ok.choice.point) : undefined,
            estimatedMs: o.ok.choice?.estimatedMs ?? 0,
            withinBudget: o.ok.choice?.withinBudget ?? false,
            frontierJobId: o.ok.jobId,
            frontier: o.ok.frontier.map(toFrontierPoint),
          })
        : encodeMessage(PlanReplySchema, { error: o.error }),
    queue: QueueGroups.PROFILER,
  });
});
