export * from './vllm-events.codec.js';
export { VllmEventsPublisher, seqFrame, type VllmPublisherOptions } from './vllm-events.publisher.js';
export { VllmEventsSubscriber, type VllmSubscriberOptions } from './vllm-events.subscriber.js';
export { loadZmq } from './zmq.loader.js';
