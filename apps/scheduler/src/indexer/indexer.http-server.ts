import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, errorStatus, isMnemoError, MnemoError } from '@mnemo/kv-core';
import { HttpEndpoint } from '@mnemo/service-kit';
import { IndexerAccess, type IndexerCaller } from './indexer.access.js';
import type { IndexerQuery, QueryIndexerUseCase } from './query-indexer.use-case.js';

const MAX_BODY_BYTES = 8 << 20;

/**
 * The KV indexer HTTP API (Mooncake Conductor's indexer: `POST /query` with `token_ids`,
 * `POST /query_by_hash` with `block_hash`, each with `model` and optional `lora_name` / `lora_id`).
 * Mnemo serves no LoRA adapters, so a query naming one matches nothing (an empty `data`).
 * Every request needs `Authorization: Bearer <key>` (IndexerAccess): 401 without a valid one.
 * A tenant's key gets `/query` over its own tenant; `/query_by_hash` (chunk keys carry no readable
 * tenant) and the `tenant` extension (a chunk-key salt, default SCHEDULER_VLLM_TENANT) are an
 * admin's; a tenant key naming another tenant gets 403. Errors are `{ "error": { "message", "code" } }`.
 */
export class IndexerHttpServer {
  private readonly http = new HttpEndpoint((req, res) => void this.handle(req, res));

  constructor(
    private readonly useCase: QueryIndexerUseCase,
    private readonly defaultTenant: string,
    private readonly access: IndexerAccess,
  ) {}

  listen(port: number, host: string): Promise<number> {
    return this.http.listen(port, host);
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (path !== '/query' && path !== '/query_by_hash')
        throw new MnemoError(ErrorCode.NotFound, `no route ${path}: POST /query or /query_by_hash`);
      if (req.method !== 'POST') throw new MnemoError(ErrorCode.InvalidRequest, `${path} takes POST`);
      // Before the body is read: an unauthenticated caller costs no parsing.
      const caller = this.access.caller(req.headers.authorization);
      const body = await readJson(req);
      send(res, 200, this.useCase.execute(this.parse(path, body, caller)));
    } catch (e) {
      const err = isMnemoError(e) ? e : new MnemoError(ErrorCode.Internal, 'internal error');
      send(res, errorStatus(err.code).http, { error: { message: err.message, code: err.code } });
    }
  }

  private parse(path: string, b: Record<string, unknown>, caller: IndexerCaller): IndexerQuery {
    const bad = (msg: string, param: string) => new MnemoError(ErrorCode.InvalidRequest, msg, { param });
    if (typeof b.model !== 'string' || b.model.length === 0) throw bad('model: a model name is required', 'model');
    if (b.lora_name !== undefined && b.lora_name !== null && b.lora_id !== undefined && b.lora_id !== null && b.lora_id !== -1)
      throw bad('give lora_name or lora_id, not both', 'lora_name');
    // No adapters here: any LoRA names KV that cannot exist, so the answer is empty (salted apart).
    const lora = (typeof b.lora_name === 'string' && b.lora_name.length > 0) || (typeof b.lora_id === 'number' && b.lora_id !== -1);
    const model = lora ? `${b.model}\u0000lora` : b.model;
    if (path === '/query') {
      if (!Array.isArray(b.token_ids)) throw bad('token_ids: a list of token ids is required', 'token_ids');
      if (b.tenant !== undefined && typeof b.tenant !== 'string') throw bad('tenant: a string', 'tenant');
      return {
        model,
        tenant: IndexerAccess.scope(caller, b.tenant as string | undefined, this.defaultTenant),
        tokenIds: b.token_ids as number[],
      };
    }
    if (!caller.admin)
      throw new MnemoError(
        ErrorCode.PermissionDenied,
        '/query_by_hash takes an admin key: a chunk key names no tenant that could be checked',
      );
    if (!Array.isArray(b.block_hash) || !b.block_hash.every((h) => typeof h === 'string'))
      throw bad('block_hash: a list of chunk keys is required', 'block_hash');
    return { model, blockHashes: b.block_hash as string[] };
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new MnemoError(ErrorCode.InvalidRequest, `a query body is at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(c as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new MnemoError(ErrorCode.InvalidRequest, 'the body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new MnemoError(ErrorCode.InvalidRequest, 'the body is a JSON object');
  return body as Record<string, unknown>;
}
