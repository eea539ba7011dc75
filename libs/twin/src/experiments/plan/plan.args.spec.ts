import { MODELS } from '../../costs/hardware.tables.js';
import { parsePlanArgs, PlanArgsError, PLAN_GPUS } from './plan.args.js';
import { PLAN_POLICIES } from './plan.setup.js';

const ok = ['--users', '64', '--model', 'llama-3.1-8b', '--gpu', 'A100', '--slo-ttft-ms', '2000'];
const problemsOf = (argv: string[]): readonly string[] => {
  try {
    parsePlanArgs(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(PlanArgsError);
    expect((e as PlanArgsError).code).toBe(2);
    return (e as PlanArgsError).problems;
  }
  throw new Error('parsed');
};

describe('plan arguments', () => {
  it('parses a full command line, every policy by default', () => {
    expect(parsePlanArgs(ok)).toEqual({
      users: 64,
      model: 'llama-3.1-8b',
      gpu: 'A100',
      sloTtftMs: 2000,
      sloTpotMs: null,
      policies: PLAN_POLICIES,
      out: null,
    });
    expect(parsePlanArgs([...ok, '--policy', 'LLMD', '--slo-tpot-ms=25', '--out', 'x.json'])).toMatchObject({
      policies: ['llmd'],
      sloTpotMs: 25,
      out: 'x.json',
    });
    expect(parsePlanArgs([...ok.slice(0, 4), '--gpu', 'h100', ...ok.slice(6)]).gpu).toBe('H100');
  });

  it.each([
    ['an unknown model, listing the valid ones', ['--model', 'gpt-4'], `unknown model "gpt-4" (valid: ${Object.keys(MODELS).join(', ')})`],
    ['an unknown gpu, listing the priced ones', ['--gpu', 'V100'], 'unknown gpu "V100" (valid: A10, A100, H100)'],
    [
      'an unknown policy, listing the valid ones',
      ['--policy', 'sglang'],
      /unknown policy "sglang" \(valid: symphony, recompute, infercept, llmd\)/,
    ],
    ['users that are not a positive integer', ['--users', '2.5'], /--users must be a positive integer/],
    ['a non-numeric SLO', ['--slo-ttft-ms', 'fast'], /--slo-ttft-ms must be a positive number/],
    ['an unknown flag', ['--nodes', '4'], /unknown argument "--nodes"/],
    ['a flag without its value', ['--policy'], /--policy needs a value/],
    ['a model the GPU cannot hold a whole session of', ['--model', 'llama-2-13b', '--gpu', 'A10'], /leaves KV room for 0 tokens/],
  ])('rejects %s with exit code 2', (_, change, message) => {
    const argv = [...ok];
    for (let i = 0; i < change.length; i += 2) {
      const at = argv.indexOf(change[i]!);
      if (at >= 0) argv.splice(at, 2, ...change.slice(i, i + 2));
      else argv.push(...change.slice(i, i + 2));
    }
    expect(problemsOf(argv).join('\n')).toEqual(
      typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
    );
  });

  it('accepts only GPUs the cost model prices', () => {
    expect(Object.keys(PLAN_GPUS)).toEqual(['A10', 'A100', 'H100']);
  });

  it('lists every problem at once, the missing flags among them', () => {
    const problems = problemsOf(['--gpu', 'V100']);
    expect(problems).toEqual(expect.arrayContaining(['--users is required', '--model is required', '--slo-ttft-ms is required']));
    expect(problems.some((p) => p.startsWith('unknown gpu'))).toBe(true);
  });
});
