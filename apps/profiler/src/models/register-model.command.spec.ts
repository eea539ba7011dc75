import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { RegisterModelCommand } from './register-model.command.js';

describe(RegisterModelCommand.name, () => {
  const ok = { id: 'meta-llama/Llama-3.1-8B', architecture: 'llama', numLayers: 32, baseModelId: '' };

  it('maps an empty base_model_id to null', () => {
    const sut = RegisterModelCommand.from(ok);
    expect(sut).toMatchObject({ id: ok.id, architecture: 'llama', numLayers: 32, baseModelId: null });
  });

  it('keeps a base model id', () => {
    expect(RegisterModelCommand.from({ ...ok, id: 'chat', baseModelId: 'base' }).baseModelId).toBe('base');
  });

  it.each([
    ['empty id', { id: '' }],
    ['id with a space', { id: 'a b' }],
    ['id starting with a dash', { id: '-x' }],
    ['id of 201 chars', { id: 'a'.repeat(201) }],
    ['empty architecture', { architecture: '' }],
    ['upper-case architecture', { architecture: 'Llama' }],
    ['zero layers', { numLayers: 0 }],
    ['too many layers', { numLayers: 5000 }],
    ['fractional layers', { numLayers: 1.5 }],
    ['malformed base id', { baseModelId: 'no spaces please' }],
    ['itself as base', { id: 'm', baseModelId: 'm' }],
  ])('rejects %s with invalid_request', (_name, patch) => {
    let err: unknown;
    try {
      RegisterModelCommand.from({ ...ok, ...patch });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MnemoError);
    expect((err as MnemoError).code).toBe(ErrorCode.InvalidRequest);
  });

  it('lists every problem at once', () => {
    expect(() => RegisterModelCommand.from({ id: '', architecture: '', numLayers: 0, baseModelId: '' })).toThrow(
      expect.objectContaining({
        details: {
          problems: expect.arrayContaining([
            expect.stringMatching(/^id/),
            expect.stringMatching(/^architecture/),
            expect.stringMatching(/^num_layers/),
          ]),
        },
      }),
    );
  });
});
