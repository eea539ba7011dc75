import { parseTraceArgs, TraceArgsError } from './trace.args.js';

const FILE = 'bench/traces/mooncake-conversation_trace.jsonl.gz';

describe(parseTraceArgs.name, () => {
  it("knows Mooncake's trace: the paper's figures, replayed at its own timestamps with nothing fitted", () => {
    const c = parseTraceArgs(['--trace', FILE]);
    expect(c.name).toBe('mooncake-conversation_trace');
    expect(c.paper.localTtftMs).toBe(3580);
    expect(c.experiment).toMatchObject({ timeScale: 1, fitTtftMs: null });
    expect(c.paper.fig5.randomOverLocal).toBe(5.49);
    expect(c.experiment).toMatchObject({ nodes: 8, hostTokens: 3_000_000, ssdTokens: 0 });
  });

  it.each([
    ['another file', ['--trace', '/x/mine.jsonl'], 'mine', null, null, null],
    ['another file with a TTFT to fit to', ['--trace', 'mine.jsonl.gz', '--fit-ttft-ms', '900'], 'mine-fitted', 900, null, null],
    ['a slice of the known trace: not the paper run', ['--trace', FILE, '--limit', '500'], 'mooncake-conversation_trace', null, null, null],
    ['the paper run fitted on request', ['--trace', FILE, '--fit-ttft-ms', '3580'], 'mooncake-conversation_trace-fitted', 3580, 5.49, 3580],
    ['a time scale given: nothing fitted', ['--trace', FILE, '--time-scale', '0.4'], 'mooncake-conversation_trace', null, 5.49, 3580],
  ])('%s', (_n, argv, name, fit, fig5, paperTtft) => {
    const c = parseTraceArgs(argv);
    expect(c.name).toBe(name);
    expect(c.experiment.fitTtftMs).toBe(fit);
    expect(c.paper.localTtftMs).toBe(paperTtft);
    expect(c.paper.fig5.randomOverLocal).toBe(fig5);
  });

  it('takes the sizes, policies and slice', () => {
    const c = parseTraceArgs([
      '--trace',
      FILE,
      '--nodes',
      '4',
      '--cache-tokens',
      '1000000',
      '--policy',
      'local,conductor',
      '--length-scale',
      '256',
    ]);
    expect(c.experiment).toMatchObject({ nodes: 4, hostTokens: 1_000_000, policies: ['local', 'conductor'] });
    expect(c.load).toMatchObject({ tokensPerBlock: 256 });
  });

  it.each([
    [[], /--trace FILE is required/],
    [['--trace', FILE, '--nodes', '0'], /--nodes must be an integer/],
    [['--trace', FILE, '--length-scale', '300'], /multiple of 256/],
    [['--trace', FILE, '--policy', 'fastest'], /--policy fastest is not one of/],
    [['--trace', FILE, '--bogus', '1'], /bogus/],
    [['--trace', FILE, '--time-scale', '2', '--fit-ttft-ms', '900'], /not both/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseTraceArgs(argv)).toThrow(TraceArgsError);
    expect(() => parseTraceArgs(argv)).toThrow(message);
  });
});
