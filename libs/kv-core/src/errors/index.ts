export { DomainError, assertUnreachable } from './domain.error.js';
export { ErrorCode } from './error-code.enum.js';
export { MnemoError, isMnemoError } from './mnemo.error.js';
export { errorStatus, GrpcStatus, type ErrorStatus } from './error-status.mapper.js';
