// `npm run twin -- validate [--engine]`: the twin on the multi-round benchmark's own workload, cluster
// and cost model (bench/multiround, bench/results/multiround.json; or bench multiround-engine's run on
// the reference engine with its fitted compute port) with the costs this machine's calibration
// measured, against each system's live per-pass figures. The comparison is libs/twin's
// (experiments/validate); what it cannot import is passed in: the live run's sessions, drawn by
// testkit's generator, and the sim benchmark's own settings (bench/multiround/cluster.mjs).
import { validateAgainstLive } from '@mnemo/twin';
import { DEFAULT_WORKLOAD, workload } from '@mnemo/testkit';
import { CLUSTER, DILATION, GPU, KV_BYTES_PER_TOKEN, KV_LAYOUT } from '../../bench/multiround/cluster.mjs';

export const VALIDATE_PORTS = {
  sessions: (options) => workload({ ...DEFAULT_WORKLOAD, ...options }),
  bench: { cluster: CLUSTER, gpu: GPU, dilation: DILATION, kvLayers: KV_LAYOUT.layers, kvBytesPerToken: KV_BYTES_PER_TOKEN },
};

/** `mr`: the live results file, `cal`: the calibration file, both parsed. */
export const validate = (o) => validateAgainstLive(VALIDATE_PORTS, o);
