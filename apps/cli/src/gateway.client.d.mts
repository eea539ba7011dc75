export class GatewayError extends Error {
  readonly status: number;
  constructor(status: number, message: string);
}
export class GatewayClient {
  readonly url: string;
  constructor(o?: { url?: string; apiKey?: string; adminKey?: string; fetch?: typeof fetch });
  headers(extra?: Record<string, string>): Record<string, string>;
  json(path: string, init?: RequestInit): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  chatStream(
    body: object,
    onDelta: (text: string) => void,
  ): Promise<{ id?: string; usage?: unknown; ttftMs?: number; finishReason?: string }>;
  fetch: typeof fetch;
}
