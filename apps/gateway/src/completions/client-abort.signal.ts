import type { Response } from 'express';

/**
 * Aborts when the client goes away before the response finished. `res` 'close' is the
 * reliable signal: `req` 'close' also fires after a normal upload of the body.
 */
export function clientAbortSignal(res: Response): AbortSignal {
  const ac = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  return ac.signal;
}
