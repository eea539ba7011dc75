// `npm run twin -- pooling`: unified KV pooling's experiment on the twin (libs/twin
// experiments/pooling) and its ±20% rows, judged against the `twin-pooling` targets registered in
// testkit, which the twin cannot import (its figure is bench/figures/twin-pooling.figure.mjs).
import { holds, targetOf } from '@mnemo/testkit';
import { poolingExperiment, poolingRobustness } from '@mnemo/twin';

export function runPooling() {
  const targets = (path, value) => holds(value, targetOf('twin-pooling', path));
  return { ...poolingExperiment(), robustness: poolingRobustness(targets) };
}
