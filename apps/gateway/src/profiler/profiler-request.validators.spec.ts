import { ErrorCode, isMnemoError } from '@mnemo/kv-core';
import { parseJobBody, parseJobId, parseModelId } from './profiler-request.validators.js';

function codeAndParam(f: () => unknown): [string, unknown] | 'ok' {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (!isMnemoError(e)) throw e;
    return [e.code, e.details?.param];
  }
}

describe(parseJobBody.name, () => {
  const cases: Array<[string, unknown, [string, unknown] | 'ok']> = [
    ['minimal', { base: 'a', derived: 'b' }, 'ok'],
    ['with dataset and continuation', { base: 'a', derived: 'b', continuationTokens: 4, dataset: { kind: 'jsonl', jsonl: '' } }, 'ok'],
    ['not an object', [1], [ErrorCode.InvalidRequest, undefined]],
    ['null body', null, [ErrorCode.InvalidRequest, undefined]],
    ['missing base', { derived: 'b' }, [ErrorCode.InvalidRequest, 'base']],
    ['empty derived', { base: 'a', derived: '' }, [ErrorCode.InvalidRequest, 'derived']],
    ['numeric base', { base: 7, derived: 'b' }, [ErrorCode.InvalidRequest, 'base']],
    ['overlong id', { base: 'x'.repeat(257), derived: 'b' }, [ErrorCode.InvalidRequest, 'base']],
    ['control character', { base: 'a\nb', derived: 'b' }, [ErrorCode.InvalidRequest, 'base']],
    ['fractional continuation', { base: 'a', derived: 'b', continuationTokens: 1.5 }, [ErrorCode.InvalidRequest, 'continuationTokens']],
    ['zero continuation', { base: 'a', derived: 'b', continuationTokens: 0 }, [ErrorCode.InvalidRequest, 'continuationTokens']],
    ['dataset not an object', { base: 'a', derived: 'b', dataset: 'x' }, [ErrorCode.InvalidRequest, 'dataset']],
    ['unknown dataset kind', { base: 'a', derived: 'b', dataset: { kind: 'csv' } }, [ErrorCode.InvalidRequest, 'dataset.kind']],
  ];
  it.each(cases)('%s', (_name, body, expected) => {
    expect(codeAndParam(() => parseJobBody(body))).toEqual(expected);
  });
});

describe(parseJobId.name, () => {
  const cases: Array<[string, [string, unknown] | 'ok']> = [
    ['0f8fad5b-d9cb-469f-a165-70867728950e', 'ok'],
    ['0F8FAD5B-D9CB-469F-A165-70867728950E', 'ok'],
    ['42', [ErrorCode.InvalidRequest, 'id']],
    ['', [ErrorCode.InvalidRequest, 'id']],
    ['0f8fad5b-d9cb-469f-a165-70867728950e0', [ErrorCode.InvalidRequest, 'id']],
  ];
  it.each(cases)('%j', (id, expected) => {
    expect(codeAndParam(() => parseJobId(id))).toEqual(expected);
  });
});

describe(parseModelId.name, () => {
  it.each([
    ['org/model', 'ok'],
    ['', [ErrorCode.InvalidRequest, 'base']],
    ['\u0007', [ErrorCode.InvalidRequest, 'base']],
  ] as Array<[string, unknown]>)('%j', (id, expected) => {
    expect(codeAndParam(() => parseModelId(id, 'base'))).toEqual(expected);
  });
});
