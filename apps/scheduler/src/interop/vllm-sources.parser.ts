import { isSubjectToken } from '@mnemo/proto';

/** One external engine whose vLLM-format KV events feed the directory. */
export interface VllmSource {
  /** Its name in the directory and in indexer answers (a node id's alphabet). */
  readonly id: string;
  /** The model its KV is for (chunk keys name the model). */
  readonly model: string;
  readonly endpoint: string;
  readonly replayEndpoint?: string;
}

const ENDPOINT = /^(tcp:\/\/[^\s|;@]+:\d+|ipc:\/\/[^\s|;@]+)$/;

/** SCHEDULER_VLLM_SOURCES: `id=model@tcp://host:5557[|tcp://host:5558]` entries separated by `;`. */
export function parseVllmSources(spec: string): { sources: VllmSource[]; problems: string[] } {
  const sources: VllmSource[] = [];
  const problems: string[] = [];
  for (const entry of spec
    .split(';')
    .map((e) => e.trim())
    .filter((e) => e.length > 0)) {
    const m = /^([^=]+)=([^@]+)@(.+)$/.exec(entry);
    const [pub, replay, ...extra] = m ? m[3]!.split('|') : [];
    if (!m || !pub || !ENDPOINT.test(pub) || (replay !== undefined && !ENDPOINT.test(replay)) || extra.length > 0) {
      problems.push(`SCHEDULER_VLLM_SOURCES entry ${JSON.stringify(entry)}: id=model@tcp://host:port[|tcp://host:port]`);
      continue;
    }
    const id = m[1]!.trim();
    if (!isSubjectToken(id)) problems.push(`SCHEDULER_VLLM_SOURCES: id ${JSON.stringify(id)} must match [A-Za-z0-9_-]+`);
    else if (sources.some((s) => s.id === id)) problems.push(`SCHEDULER_VLLM_SOURCES: id ${id} given twice`);
    else sources.push({ id, model: m[2]!.trim(), endpoint: pub, ...(replay ? { replayEndpoint: replay } : {}) });
  }
  return { sources, problems };
}
