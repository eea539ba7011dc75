import { Inject, Injectable } from '@nestjs/common';
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator.js';
import { ErrorReporter } from '../errors/error.reporter.js';
import { authorizationOf, grpcFailure } from '../grpc/grpc.call.js';
import { SessionUseCase } from '../sessions/session.use-case.js';
import { parseAdviseBody } from './advise.command.js';
import { AdviseUseCase } from './advise.use-case.js';

/** `mnemo.v1.AdviseRequest` as proto-loader hands it over (camelCase, unset optionals undefined). */
interface GrpcAdviseRequest {
  sessionId: string;
  model: string;
  expectedArrivalUnixMs?: number;
  ordered: boolean;
  priority: number;
}

/**
 * gRPC `Advise`, `Invalidate`, `DeleteSession`: the same validation and use cases as the REST
 * doors; errors map through errorStatus like every other gRPC call.
 */
@Injectable()
export class AdvisoriesGrpcController {
  constructor(
    @Inject(AdviseUseCase) private readonly advise: AdviseUseCase,
    @Inject(SessionUseCase) private readonly sessions: SessionUseCase,
    @Inject(ApiKeyAuthenticator) private readonly auth: ApiKeyAuthenticator,
    @Inject(ErrorReporter) private readonly reporter: ErrorReporter,
  ) {}

  readonly Advise = this.unary<GrpcAdviseRequest>(async (r, tenant) => {
    const cmd = parseAdviseBody(
      { session_id: r.sessionId, model: r.model, expected_arrival: r.expectedArrivalUnixMs, ordered: r.ordered, priority: r.priority },
      tenant,
    );
    const a = await this.advise.execute(cmd);
    return { advisoryId: a.advisory_id, nodeId: a.node, expiresUnixMs: a.expires_at };
  });

  readonly Invalidate = this.unary<{ advisoryId: string }>(async (r, tenant) => {
    await this.advise.invalidate(tenant, r.advisoryId);
    return { found: true };
  });

  readonly DeleteSession = this.unary<{ sessionId: string }>(async (r, tenant) => {
    const d = await this.sessions.delete(tenant, r.sessionId);
    return { found: true, freedChunks: d.freed_chunks };
  });

  private unary<Req>(handle: (request: Req, tenant: string) => Promise<object>) {
    return (call: ServerUnaryCall<Req, object>, callback: sendUnaryData<object>) => {
      void (async () => {
        try {
          const tenant = this.auth.authenticate(authorizationOf(call.metadata));
          callback(null, await handle(call.request, tenant));
        } catch (e) {
          callback(grpcFailure(this.reporter, e));
        }
      })();
    };
  }
}
