import { ErrorCode } from './error-code.enum.js';
import { errorStatus, GrpcStatus } from './error-status.mapper.js';

describe(errorStatus.name, () => {
  const cases: Array<[ErrorCode, number, number, string]> = [
    [ErrorCode.InvalidRequest, 400, GrpcStatus.INVALID_ARGUMENT, 'invalid_request_error'],
    [ErrorCode.PromptTooLong, 400, GrpcStatus.INVALID_ARGUMENT, 'invalid_request_error'],
    [ErrorCode.Unauthenticated, 401, GrpcStatus.UNAUTHENTICATED, 'authentication_error'],
    [ErrorCode.PermissionDenied, 403, GrpcStatus.PERMISSION_DENIED, 'permission_error'],
    [ErrorCode.ModelNotFound, 404, GrpcStatus.NOT_FOUND, 'not_found_error'],
    [ErrorCode.NotFound, 404, GrpcStatus.NOT_FOUND, 'not_found_error'],
    [ErrorCode.Conflict, 409, GrpcStatus.ABORTED, 'conflict_error'],
    [ErrorCode.Overloaded, 429, GrpcStatus.RESOURCE_EXHAUSTED, 'rate_limit_error'],
    [ErrorCode.Cancelled, 499, GrpcStatus.CANCELLED, 'request_cancelled'],
    [ErrorCode.Internal, 500, GrpcStatus.INTERNAL, 'server_error'],
    [ErrorCode.NoNodeAvailable, 503, GrpcStatus.UNAVAILABLE, 'service_unavailable_error'],
    [ErrorCode.Unavailable, 503, GrpcStatus.UNAVAILABLE, 'service_unavailable_error'],
    [ErrorCode.Timeout, 504, GrpcStatus.DEADLINE_EXCEEDED, 'timeout_error'],
    [ErrorCode.DataLoss, 500, GrpcStatus.DATA_LOSS, 'server_error'],
  ];

  it.each(cases)('maps %s to HTTP %i, gRPC %i, %s', (code, http, grpc, openaiType) => {
    expect(errorStatus(code)).toEqual({ http, grpc, openaiType });
  });

  it('covers every code in the enum', () => {
    expect(new Set(cases.map(([c]) => c))).toEqual(new Set(Object.values(ErrorCode)));
  });

  it('uses the numeric gRPC codes of grpc/status.proto', () => {
    expect([
      GrpcStatus.CANCELLED,
      GrpcStatus.INVALID_ARGUMENT,
      GrpcStatus.DEADLINE_EXCEEDED,
      GrpcStatus.NOT_FOUND,
      GrpcStatus.PERMISSION_DENIED,
      GrpcStatus.RESOURCE_EXHAUSTED,
      GrpcStatus.ABORTED,
      GrpcStatus.INTERNAL,
      GrpcStatus.UNAVAILABLE,
      GrpcStatus.UNAUTHENTICATED,
    ]).toEqual([1, 3, 4, 5, 7, 8, 10, 13, 14, 16]);
  });

  it('throws for a value outside the enum (reached only by unchecked casts)', () => {
    expect(() => errorStatus('bogus' as ErrorCode)).toThrow(/unreachable/);
  });
});
