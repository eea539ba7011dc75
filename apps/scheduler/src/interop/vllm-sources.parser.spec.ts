import { parseVllmSources } from './vllm-sources.parser.js';

describe('parseVllmSources', () => {
  it.each<[string, string, object[], number]>([
    ['nothing', '', [], 0],
    [
      'one engine, no replay',
      'vllm-a=Qwen/Qwen3-8B@tcp://10.0.0.5:5557',
      [{ id: 'vllm-a', model: 'Qwen/Qwen3-8B', endpoint: 'tcp://10.0.0.5:5557' }],
      0,
    ],
    [
      'two engines, one with a replay socket',
      'a=m@tcp://h:5557|tcp://h:5558; b=m@ipc:///tmp/kv',
      [
        { id: 'a', model: 'm', endpoint: 'tcp://h:5557', replayEndpoint: 'tcp://h:5558' },
        { id: 'b', model: 'm', endpoint: 'ipc:///tmp/kv' },
      ],
      0,
    ],
    ['no model', 'a=@tcp://h:1', [], 1],
    ['not an endpoint', 'a=m@http://h:1', [], 1],
    ['a port missing', 'a=m@tcp://h', [], 1],
    ['an id that is not a subject token', 'a.b=m@tcp://h:1', [], 1],
    ['the same id twice', 'a=m@tcp://h:1;a=m@tcp://h:2', [{ id: 'a', model: 'm', endpoint: 'tcp://h:1' }], 1],
  ])('%s', (_n, spec, sources, problems) => {
    const r = parseVllmSources(spec);
    expect(r.sources).toEqual(sources);
    expect(r.problems).toHaveLength(problems);
  });
});
