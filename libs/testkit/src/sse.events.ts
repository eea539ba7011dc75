/**
 * The `data:` payloads of a server-sent event stream (the gateway's streamed completions), one per
 * event as soon as its blank line arrives, so a caller can time the events. `[DONE]` is yielded
 * like any other payload: what it ends is the caller's.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, at);
      buffered = buffered.slice(at + 2);
      yield event.replace(/^data: /, '');
    }
  }
}
