import { Module } from '@nestjs/common';
import { TokenizersNatsHandler } from './tokenizers.nats-handler.js';

/** Serves the tokenizer bundles of this node's model directories to gateways. */
@Module({
  providers: [TokenizersNatsHandler],
})
export class TokenizersModule {}
