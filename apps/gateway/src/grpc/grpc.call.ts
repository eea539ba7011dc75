import { status, type Metadata } from '@grpc/grpc-js';
import { errorStatus, isMnemoError } from '@mnemo/kv-core';
import type { ErrorReporter } from '../errors/error.reporter.js';

/** A call's `authorization` metadata as text, what the REST doors read from their header. */
export function authorizationOf(metadata: Metadata): string | undefined {
  const header = metadata.get('authorization')[0];
  return typeof header === 'string' ? header : header?.toString();
}

/**
 * How a failed gRPC call ends: the domain error's gRPC code (INTERNAL for anything else) with the
 * message the REST doors would answer, reported once like theirs.
 */
export function grpcFailure(reporter: ErrorReporter, e: unknown, context: Record<string, unknown> = {}): { code: status; details: string } {
  const mapped = reporter.report(e, { ...context, transport: 'grpc' });
  return { code: isMnemoError(e) ? errorStatus(e.code).grpc : status.INTERNAL, details: mapped.body.error.message };
}
