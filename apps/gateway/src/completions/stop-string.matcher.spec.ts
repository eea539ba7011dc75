import { StopStringMatcher } from './stop-string.matcher.js';

describe(StopStringMatcher.name, () => {
  const cases: Array<[string, string[], string[], string, boolean]> = [
    // name, stops, pieces, emitted text (incl. flush), stopped
    ['no stops passes through', [], ['ab', 'cd'], 'abcd', false],
    ['stop inside one piece', ['END'], ['abcENDxyz'], 'abc', true],
    ['stop split across pieces', ['END'], ['abcE', 'N', 'Dxyz'], 'abc', true],
    ['near miss is released', ['END'], ['abcE', 'Nx'], 'abcENx', false],
    ['held-back prefix released at flush', ['END'], ['abcEN'], 'abcEN', false],
    ['earliest of several stops wins', ['yz', 'c'], ['abcxyz'], 'ab', true],
    ['stop at the very start', ['\n'], ['\nhello'], '', true],
    ['multi-byte text', ['é!'], ['caf', 'é', '!', 'more'], 'caf', true],
  ];
  it.each(cases)('%s', (_name, stops, pieces, expected, expectStopped) => {
    const sut = new StopStringMatcher(stops);
    let out = '';
    let stopped = false;
    for (const p of pieces) {
      const r = sut.push(p);
      out += r.text;
      if (r.stopped) {
        stopped = true;
        break;
      }
    }
    if (!stopped) out += sut.flush();
    expect({ out, stopped }).toEqual({ out: expected, stopped: expectStopped });
  });

  it('never emits a prefix of a stop string early', () => {
    const sut = new StopStringMatcher(['STOP']);
    expect(sut.push('xS').text).toBe('x');
    expect(sut.push('T').text).toBe('');
    expect(sut.push('O').text).toBe('');
    expect(sut.push('P')).toEqual({ text: '', stopped: true });
  });
});
