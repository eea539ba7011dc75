import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway.config.js';

/** A profiler answer passed on to the client as it came: status, content type and body bytes. */
export interface ProfilerAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/**
 * The gateway's side of the profiler's REST API (`GATEWAY_PROFILER_URL`). HTTP rather than NATS:
 * the profiler's REST API is the one public surface of profiling (jobs, frontiers, an SVG), and
 * proxying it keeps one implementation of it. Transport failures and the profiler's own errors
 * become domain errors, so the gateway answers them in its usual error shape: not reachable →
 * no_node_available (503), no answer in time → timeout (504), a 4xx → its code.
 */
@Injectable()
export class ProfilerClient {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  async send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ProfilerAnswer> {
    let res: Response;
    try {
      res = await fetch(`${this.config.profilerUrl}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.profilerTimeoutMs),
      });
    } catch (e) {
      if ((e as Error)?.name === 'TimeoutError')
        throw new MnemoError(ErrorCode.Timeout, `the profiler did not answer within ${this.config.profilerTimeoutMs} ms`);
      throw new MnemoError(ErrorCode.NoNodeAvailable, 'the profiler is not reachable');
    }
    const answer = {
      status: res.status,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      body: Buffer.from(await res.arrayBuffer()),
    };
    if (answer.status >= 400) throw profilerError(answer);
    return answer;
  }
}

/** `{error: {code, message}}` from the profiler as a domain error; its own 5xx stays a 5xx without its details. */
function profilerError(a: ProfilerAnswer): MnemoError {
  let parsed: { error?: { code?: unknown; message?: unknown } } = {};
  try {
    parsed = JSON.parse(a.body.toString('utf8')) as typeof parsed;
  } catch {
    // Not JSON: fall back to the status alone.
  }
  // Its database down: the profiler says so, and the client may retry; that message is meant for it.
  if (a.status === 503 && parsed.error?.code === ErrorCode.Unavailable && typeof parsed.error.message === 'string')
    return new MnemoError(ErrorCode.Unavailable, parsed.error.message);
  if (a.status >= 500)
    return new MnemoError(a.status === 503 ? ErrorCode.NoNodeAvailable : ErrorCode.Internal, `the profiler failed (HTTP ${a.status})`);
  const code =
    typeof parsed.error?.code === 'string' && CODES.has(parsed.error.code)
      ? (parsed.error.code as ErrorCode)
      : a.status === 404
        ? ErrorCode.NotFound
        : ErrorCode.InvalidRequest;
  const message = typeof parsed.error?.message === 'string' ? parsed.error.message : `the profiler refused the request (HTTP ${a.status})`;
  return new MnemoError(code, message);
}
