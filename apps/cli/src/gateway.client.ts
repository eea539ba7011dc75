// The CLI's one door into a cluster: the gateway's REST API (MNEMO_URL, default
// http://127.0.0.1:8080), with MNEMO_API_KEY as the bearer and MNEMO_ADMIN_KEY as x-admin-key.
import type { ChatCompletionChunk, ChatTurn, ErrorBody } from './gateway.types.js';

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface GatewayClientOptions {
  url?: string;
  apiKey?: string;
  adminKey?: string;
  fetch?: typeof fetch;
}

export class GatewayClient {
  readonly url: string;
  readonly apiKey: string | undefined;
  readonly adminKey: string | undefined;
  readonly fetch: typeof fetch;

  constructor(o: GatewayClientOptions = {}) {
    this.url = (o.url ?? process.env.MNEMO_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.apiKey = o.apiKey ?? process.env.MNEMO_API_KEY;
    this.adminKey = o.adminKey ?? process.env.MNEMO_ADMIN_KEY;
    this.fetch = o.fetch ?? fetch;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
      ...(this.adminKey ? { 'x-admin-key': this.adminKey } : {}),
      ...extra,
    };
  }

  /** The JSON answer of `path`, typed by the caller (the gateway's shapes are in gateway.types.ts); a non-2xx throws GatewayError. */
  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    let r: Response;
    try {
      r = await this.fetch(this.url + path, { ...init, headers: this.headers(init.body ? { 'content-type': 'application/json' } : {}) });
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw new GatewayError(
        0,
        `cannot reach the gateway at ${this.url} (${why}): is \`mnemo up\` running? (MNEMO_URL sets another address)`,
      );
    }
    const text = await r.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = { error: { message: text } };
    }
    if (!r.ok) throw new GatewayError(r.status, (body as ErrorBody | null)?.error?.message ?? `HTTP ${r.status}`);
    return body as T;
  }

  /**
   * Streams a chat completion: `onDelta(text)` per piece; resolves with the id, usage and the
   * time to the first piece of text (ms, as this client saw it).
   */
  async chatStream(body: object, onDelta: (text: string) => void): Promise<ChatTurn> {
    const started = performance.now();
    let r: Response;
    try {
      r = await this.fetch(`${this.url}/v1/chat/completions`, {
        method: 'POST',
        headers: this.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      });
    } catch (e) {
      throw new GatewayError(0, `cannot reach the gateway at ${this.url} (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!r.ok || !r.body) {
      const t = await r.text();
      let msg = `HTTP ${r.status}`;
      try {
        msg = (JSON.parse(t) as ErrorBody).error?.message ?? msg;
      } catch {
        /* not JSON */
      }
      throw new GatewayError(r.status, msg);
    }
    const out: ChatTurn = {};
    const decoder = new TextDecoder();
    let buf = '';
    for await (const bytes of r.body) {
      buf += decoder.decode(bytes, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return out;
        const chunk = JSON.parse(data) as ChatCompletionChunk;
        if (chunk.error) throw new GatewayError(500, chunk.error.message ?? 'stream failed');
        out.id ??= chunk.id;
        if (chunk.usage) out.usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (choice?.finish_reason) out.finishReason = choice.finish_reason;
        const text = choice?.delta?.content;
        if (text) {
          out.ttftMs ??= performance.now() - started;
          onDelta(text);
        }
      }
    }
    return out;
  }
}
