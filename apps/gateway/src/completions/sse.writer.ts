import type { Response } from 'express';

/** One Server-Sent Events frame: `data: <json>\n\n` (JSON has no raw newlines, so one data line). */
export function sseFrame(data: object | string): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** The terminator OpenAI clients wait for. */
export const SSE_DONE = sseFrame('[DONE]');

/**
 * Writes an OpenAI-style event stream; waits for the socket to drain so a slow client slows the
 * reader (and, through the bounded event buffer, pauses the node), never grows memory.
 */
export class SseWriter {
  constructor(private readonly res: Response) {}

  open(): void {
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache');
    this.res.setHeader('Connection', 'keep-alive');
    // Proxies such as nginx would otherwise buffer the stream.
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
  }

  async send(data: object): Promise<void> {
    await this.write(sseFrame(data));
  }

  done(): void {
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end(SSE_DONE);
  }

  private write(chunk: string): Promise<void> {
    if (this.res.writableEnded || this.res.destroyed) return Promise.resolve();
    if (this.res.write(chunk)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
}
