// The CLI's one door into a cluster: the gateway's REST API (MNEMO_URL, default
// http://127.0.0.1:8080), with MNEMO_API_KEY as the bearer and MNEMO_ADMIN_KEY as x-admin-key.

export class GatewayError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export class GatewayClient {
  /** @param {{ url?: string, apiKey?: string, adminKey?: string, fetch?: typeof fetch }} o */
  constructor(o = {}) {
    this.url = (o.url ?? process.env.MNEMO_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.apiKey = o.apiKey ?? process.env.MNEMO_API_KEY;
    this.adminKey = o.adminKey ?? process.env.MNEMO_ADMIN_KEY;
    this.fetch = o.fetch ?? fetch;
  }

  /** @param {Record<string, string>} [extra] */
  headers(extra = {}) {
    return {
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
      ...(this.adminKey ? { 'x-admin-key': this.adminKey } : {}),
      ...extra,
    };
  }

  /** @param {string} path @param {RequestInit} [init] */
  async json(path, init = {}) {
    let r;
    try {
      r = await this.fetch(this.url + path, { ...init, headers: this.headers(init.body ? { 'content-type': 'application/json' } : {}) });
    } catch (e) {
      throw new GatewayError(
        0,
        `cannot reach the gateway at ${this.url} (${e instanceof Error ? e.message : String(e)}): is \`mnemo up\` running? (MNEMO_URL sets another address)`,
      );
    }
    const text = await r.text();
    let body;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = { error: { message: text } };
    }
    if (!r.ok) throw new GatewayError(r.status, body?.error?.message ?? `HTTP ${r.status}`);
    return body;
  }

  /**
   * Streams a chat completion: `onDelta(text)` per piece; resolves with the id, usage and the
   * time to the first piece of text (ms, as this client saw it).
   * @param {object} body @param {(text: string) => void} onDelta
   */
  async chatStream(body, onDelta) {
    const started = performance.now();
    let r;
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
        msg = JSON.parse(t).error?.message ?? msg;
      } catch {
        /* not JSON */
      }
      throw new GatewayError(r.status, msg);
    }
    /** @type {{ id?: string, usage?: any, ttftMs?: number, finishReason?: string }} */
    const out = {};
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
        const chunk = JSON.parse(data);
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
