// The chaos benchmark's clients: seeded users holding multi-turn chat sessions through the
// gateway (streamed; greedy or seeded sampling), sending an advisory before some turns, and a
// record of every request — its body, what the client saw (text, finish, usage, error) and when
// each piece of text arrived.
import { rng, sseData } from '@mnemo/testkit';

const TOPICS = [
  'the journal',
  'a hung peer',
  'the SSD pool',
  'NATS restarts',
  'a killed node',
  'token streams',
  'the KV directory',
  'advisories',
];

/** One streamed chat completion; never throws: a harness deadline past the gateway's own makes it `lost`. */
export async function streamChat(base, body, deadlineMs) {
  const rec = { body, startedMs: Date.now(), arrivals: [], text: '', status: 0, done: false };
  try {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      signal: AbortSignal.timeout(deadlineMs),
    });
    rec.status = res.status;
    if (res.status !== 200) {
      rec.error = (await res.json().catch(() => ({})))?.error ?? { code: `http_${res.status}` };
      return end(rec);
    }
    for await (const data of sseData(res.body)) {
      if (data === '[DONE]') {
        rec.done = true;
        continue;
      }
      const chunk = JSON.parse(data);
      rec.id ??= chunk.id;
      if (chunk.error) rec.error = chunk.error;
      if (chunk.usage) rec.usage = chunk.usage;
      for (const c of chunk.choices ?? []) {
        if (c.delta?.content) {
          rec.text += c.delta.content;
          rec.arrivals.push(Date.now());
        }
        if (c.finish_reason) rec.finish = c.finish_reason;
      }
    }
  } catch (e) {
    rec.lost = e?.name === 'TimeoutError';
    if (!rec.lost) rec.error = { code: 'connection', message: String(e?.message ?? e) };
  }
  return end(rec);
}

function end(rec) {
  rec.endedMs = Date.now();
  return rec;
}

/**
 * `users` seeded users until `untilMs` or `maxRequests` in all: each holds a session for 2–5 turns
 * (the whole history each turn), greedy or seeded sampling per session, an advisory before a
 * third of the later turns, a think time between turns.
 */
export async function runUsers({ base, users, untilMs, maxRequests, seed, deadlineMs, records, advisories, waiting = new Map() }) {
  let sent = 0;
  const user = async (u) => {
    const r = rng(seed * 1000 + u);
    for (let s = 0; Date.now() < untilMs && sent < maxRequests; s++) {
      const sessionId = `chaos-${seed}-${u}-${s}`;
      const greedy = r() < 0.7;
      const sampling = greedy ? { temperature: 0 } : { temperature: 0.8, seed: Math.floor(r() * 1e6) };
      const turns = 2 + Math.floor(r() * 4);
      const messages = [{ role: 'system', content: `You are chaos user ${u}. ${'Keep every answer. '.repeat(8)}` }];
      for (let t = 0; t < turns && Date.now() < untilMs && sent < maxRequests; t++) {
        if (t > 0 && r() < 0.33) advisories.push(await advise(base, sessionId));
        messages.push({
          role: 'user',
          content: `Turn ${t} about ${TOPICS[Math.floor(r() * TOPICS.length)]}: ${'tell me more. '.repeat(4 + Math.floor(r() * 12))}`,
        });
        const body = {
          model: 'mnemo-tiny',
          messages: messages.map((m) => ({ ...m })),
          max_tokens: 20 + Math.floor(r() * 60),
          session_id: sessionId,
          ...sampling,
        };
        sent++;
        waiting.delete(sessionId);
        const rec = await streamChat(base, body, deadlineMs);
        Object.assign(rec, { kind: greedy ? 'greedy' : 'seeded', session: sessionId, turn: t });
        records.push(rec);
        if (rec.status !== 200 || rec.error || rec.lost) break; // a failed turn ends the session: its history is unknown
        messages.push({ role: 'assistant', content: rec.text });
        // A later turn is scheduled: it will restore this turn's prefix (what the fault plan targets).
        if (t + 1 < turns) waiting.set(sessionId, rec);
        await new Promise((res) => setTimeout(res, 200 + r() * 800));
      }
    }
  };
  await Promise.all(Array.from({ length: users }, (_, u) => user(u)));
}

/** An advisory for the session's next turn: its status, or with `detail` the status and the node it was placed on. */
export async function advise(base, sessionId, detail = false) {
  try {
    const res = await fetch(`${base}/v1/advisories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: sessionId, model: 'mnemo-tiny' }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!detail) return res.status;
    return { status: res.status, node: (await res.json().catch(() => ({})))?.node };
  } catch {
    return detail ? { status: 0 } : 0;
  }
}

/** Probes (short greedy requests, one every 250 ms, none waiting for another) until one is served; seconds from `sinceMs` to the first sent that was. */
export async function timeToServe(base, sinceMs, timeoutMs = 60_000) {
  const probes = [];
  let served = false;
  while (!served && Date.now() - sinceMs < timeoutMs) {
    const sentMs = Date.now();
    probes.push(
      streamChat(
        base,
        { model: 'mnemo-tiny', messages: [{ role: 'user', content: 'Are you there?' }], max_tokens: 2, temperature: 0 },
        20_000,
      ).then((rec) => {
        const ok = rec.status === 200 && !rec.error && !rec.lost && rec.finish;
        served ||= Boolean(ok);
        return ok ? (sentMs - sinceMs) / 1000 : undefined;
      }),
    );
    await new Promise((r) => setTimeout(r, 250));
  }
  const times = (await Promise.all(probes)).filter((t) => t !== undefined);
  return times.length > 0 ? Math.min(...times) : null;
}
