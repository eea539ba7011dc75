import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { loadGrpcServices } from '@mnemo/proto';
import type { AdvisoriesGrpcController } from '../advisories/advisories.grpc.controller.js';
import type { InferGrpcController } from '../completions/infer.grpc.controller.js';

/** The gRPC front door (`mnemo.v1.Gateway`) on GATEWAY_GRPC_PORT. */
export class GatewayGrpcServer {
  private readonly server = new Server();

  constructor(infer: InferGrpcController, advisories: AdvisoriesGrpcController) {
    const impl: UntypedServiceImplementation = {
      Infer: (call: Parameters<InferGrpcController['handle']>[0]) => void infer.handle(call),
      Advise: advisories.Advise,
      Invalidate: advisories.Invalidate,
      DeleteSession: advisories.DeleteSession,
    };
    this.server.addService(loadGrpcServices().Gateway, impl);
  }

  /** Binds and starts; returns the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
  }

  /** Lets in-flight calls finish for up to `graceMs`, then cancels the rest. */
  close(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const force = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }
}
