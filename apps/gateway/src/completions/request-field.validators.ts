import { ErrorCode, MnemoError } from '@mnemo/kv-core';

/**
 * Field checks shared by the chat and completion parsers. Each throws `invalid_request`
 * with `param` set to the offending field, the way the OpenAI API reports it.
 */
export function invalid(param: string | null, message: string): MnemoError {
  return new MnemoError(ErrorCode.InvalidRequest, message, param === null ? undefined : { param });
}

export type Body = Readonly<Record<string, unknown>>;

export function requireObject(value: unknown, param: string | null, what = 'a JSON object'): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(param, `${param ?? 'request body'} must be ${what}`);
  }
  return value as Body;
}

export function requiredString(body: Body, param: string): string {
  const v = body[param];
  if (v === undefined || v === null) throw invalid(param, `missing required parameter '${param}'`);
  if (typeof v !== 'string' || v.length === 0) throw invalid(param, `'${param}' must be a non-empty string`);
  return v;
}

export function optionalString(body: Body, param: string, maxLength = 256): string | undefined {
  const v = body[param];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > maxLength) {
    throw invalid(param, `'${param}' must be a non-empty string of at most ${maxLength} characters`);
  }
  return v;
}

export function optionalBoolean(body: Body, param: string): boolean | undefined {
  const v = body[param];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(param, `'${param}' must be a boolean`);
  return v;
}

export function optionalInt(body: Body, param: string, min: number, max: number): number | undefined {
  const v = body[param];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(param, `'${param}' must be an integer in [${min}, ${max}]`);
  }
  return v;
}

/** A number in [min, max] (`minExclusive` makes the lower bound open). */
export function optionalNumber(body: Body, param: string, min: number, max: number, minExclusive = false): number | undefined {
  const v = body[param];
  if (v === undefined || v === null) return undefined;
  const low = minExclusive ? `(${min}` : `[${min}`;
  if (typeof v !== 'number' || !Number.isFinite(v) || v > max || (minExclusive ? v <= min : v < min)) {
    throw invalid(param, `'${param}' must be a number in ${low}, ${max}]`);
  }
  return v;
}

/** OpenAI's `stop`: a string or up to 4 strings. */
export function stopStrings(body: Body): string[] {
  const v = body.stop;
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw invalid('stop', "'stop' must be a non-empty string or an array of at most 4 non-empty strings");
  }
  return list as string[];
}

/** Sampling and Mnemo fields common to both endpoints. */
export function commonFields(body: Body) {
  const n = optionalInt(body, 'n', 1, Number.MAX_SAFE_INTEGER);
  if (n !== undefined && n !== 1) throw invalid('n', "only 'n': 1 is supported");
  return {
    temperature: optionalNumber(body, 'temperature', 0, 2) ?? 1,
    topP: optionalNumber(body, 'top_p', 0, 1, true) ?? 1,
    seed: optionalInt(body, 'seed', 0, Number.MAX_SAFE_INTEGER),
    stop: stopStrings(body),
    // vLLM's extension, for load tests and clients that need a reply of a given length.
    ignoreEos: optionalBoolean(body, 'ignore_eos') ?? false,
    sessionId: optionalString(body, 'session_id'),
    priority: optionalInt(body, 'priority', -1000, 1000) ?? 0,
    stream: optionalBoolean(body, 'stream') ?? false,
    includeUsage: streamIncludeUsage(body),
  };
}

function streamIncludeUsage(body: Body): boolean {
  const v = body.stream_options;
  if (v === undefined || v === null) return false;
  const o = requireObject(v, 'stream_options');
  return optionalBoolean(o, 'include_usage') ?? false;
}

/** Rejects options we would otherwise silently ignore although they change the answer. */
export function rejectUnsupported(body: Body, fields: readonly string[]): void {
  for (const f of fields) {
    const v = body[f];
    if (v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0)) continue;
    throw invalid(f, `'${f}' is not supported by this server`);
  }
}
