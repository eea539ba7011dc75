import { invalid, optionalString, requireObject, requiredString, type Body } from '../completions/request-field.validators.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_MODEL_ID = 256;
// Control characters in an id are never a model name; refusing them keeps logs and URLs clean.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The gateway checks what it can without the profiler (shape, types, lengths) so a bad request is
 * a 400 even while the profiler is down; the profiler still checks the rest (limits, model ids
 * resolving to weights) and its 400s pass through.
 */
export function parseJobBody(value: unknown): Body {
  const body = requireObject(value, null);
  for (const param of ['base', 'derived']) {
    const id = requiredString(body, param);
    checkModelId(id, param);
  }
  const tokens = body.continuationTokens;
  if (tokens !== undefined && tokens !== null && (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens < 1)) {
    throw invalid('continuationTokens', "'continuationTokens' must be a positive integer");
  }
  if (body.dataset !== undefined && body.dataset !== null) {
    const dataset = requireObject(body.dataset, 'dataset');
    const kind = optionalString(dataset, 'kind');
    if (kind !== 'synthetic' && kind !== 'jsonl') throw invalid('dataset.kind', "'dataset.kind' must be 'synthetic' or 'jsonl'");
  }
  return body;
}

export function parseJobId(id: string): string {
  if (!UUID.test(id)) throw invalid('id', `'${id.slice(0, 64)}' is not a profiling job id (a UUID)`);
  return id;
}

/** A model id from a path segment (Express has already URL-decoded it). */
export function parseModelId(id: string, param: string): string {
  checkModelId(id, param);
  return id;
}

function checkModelId(id: string, param: string): void {
  if (id.length === 0 || id.length > MAX_MODEL_ID || CONTROL.test(id)) {
    throw invalid(param, `'${param}' must be a model id of 1 to ${MAX_MODEL_ID} printable characters`);
  }
}
