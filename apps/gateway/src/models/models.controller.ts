import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { ListAvailableModelsUseCase, type ModelObject } from './list-available-models.use-case.js';

@Controller('v1/models')
@UseGuards(ApiKeyGuard)
export class ModelsController {
  constructor(@Inject(ListAvailableModelsUseCase) private readonly listModels: ListAvailableModelsUseCase) {}

  @Get()
  list(): Promise<{ object: 'list'; data: ModelObject[] }> {
    return this.listModels.execute();
  }

  /** OpenAI's retrieve-model; served from the same list. */
  @Get(':id')
  async retrieve(@Param('id') id: string): Promise<ModelObject> {
    const found = (await this.listModels.execute()).data.find((m) => m.id === id);
    if (!found) throw new MnemoError(ErrorCode.ModelNotFound, `The model '${id}' does not exist`, { param: 'model' });
    return found;
  }
}
