import { assertUnreachable } from './domain.error.js';
import { ErrorCode } from './error-code.enum.js';

/** Numeric gRPC status codes (grpc/status.proto); kept here so kv-core needs no gRPC import. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export interface ErrorStatus {
  /** HTTP status code for REST responses. */
  http: number;
  /** Numeric gRPC status code. */
  grpc: number;
  /** `error.type` in the OpenAI error body. */
  openaiType: string;
}

/**
 * The single mapping from domain codes to transport statuses. Exhaustive: adding a code
 * without a case here fails to compile at `assertUnreachable`.
 */
export function errorStatus(code: ErrorCode): ErrorStatus {
  switch (code) {
    case ErrorCode.InvalidRequest:
      return { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, openaiType: 'invalid_request_error' };
    case ErrorCode.PromptTooLong:
      return { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, openaiType: 'invalid_request_error' };
    case ErrorCode.Unauthenticated:
      return { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, openaiType: 'authentication_error' };
    case ErrorCode.PermissionDenied:
      return { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, openaiType: 'permission_error' };
    case ErrorCode.ModelNotFound:
      return { http: 404, grpc: GrpcStatus.NOT_FOUND, openaiType: 'not_found_error' };
    case ErrorCode.NotFound:
      return { http: 404, grpc: GrpcStatus.NOT_FOUND, openaiType: 'not_found_error' };
    case ErrorCode.Conflict:
      // ABORTED rather than ALREADY_EXISTS: our conflicts are concurrent-update races, retryable.
      return { http: 409, grpc: GrpcStatus.ABORTED, openaiType: 'conflict_error' };
    case ErrorCode.Overloaded:
      return { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, openaiType: 'rate_limit_error' };
    case ErrorCode.Cancelled:
      // 499 is nginx's "client closed request": the client gave up, not the server.
      return { http: 499, grpc: GrpcStatus.CANCELLED, openaiType: 'request_cancelled' };
    case ErrorCode.Internal:
      return { http: 500, grpc: GrpcStatus.INTERNAL, openaiType: 'server_error' };
    case ErrorCode.DataLoss:
      // Nodes recompute instead of failing; a client sees it only if that recompute fails too.
      return { http: 500, grpc: GrpcStatus.DATA_LOSS, openaiType: 'server_error' };
    case ErrorCode.NoNodeAvailable:
      return { http: 503, grpc: GrpcStatus.UNAVAILABLE, openaiType: 'service_unavailable_error' };
    case ErrorCode.Unavailable:
      return { http: 503, grpc: GrpcStatus.UNAVAILABLE, openaiType: 'service_unavailable_error' };
    case ErrorCode.Timeout:
      return { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED, openaiType: 'timeout_error' };
    default:
      return assertUnreachable(code);
  }
}
