// The capacity plan's cost model: US dollars per hour of a configuration. Labelled list prices,
// not quotes: an operator with their own prices edits PLAN_PRICES (docs/twin.md repeats them).
const HOURS_AMORTISED = 36 * 730; // three years of 730-hour months: the usual server depreciation

export interface PlanPrices {
  readonly gpuHourUsd: Readonly<Record<string, number>>;
  readonly dramUsdPerGb: number;
  readonly ssdUsdPerTb: number;
  readonly hoursAmortised: number;
  readonly gpusPerNode: number;
  readonly sources: Readonly<Record<string, string>>;
}

/**
 * - GPU instance-hours: RunComfy's public price list (docs.runcomfy.com/about-billing, "Hobby"
 *   column, one GPU with its host share): A10G 24 GB $1.75/h (the A10's sibling part), A100 80 GB
 *   $4.99/h, H100 80 GB $7.49/h.
 * - Host DRAM: $5 per GB of server RDIMM, an assumed list price (the last published ECC figure we
 *   found, info.grcooling.com 2016, was $4.70/GB; 2025-26 prices run higher), amortised over 3 years.
 * - SSD: $100 per TB of datacenter NVMe, an assumed list price, amortised over 3 years.
 * A node holds `gpusPerNode` instances (Symphony §4's testbed: 4 GPUs a node); its DRAM and SSD
 * are bought per node.
 */
export const PLAN_PRICES: PlanPrices = {
  gpuHourUsd: { A10: 1.75, A100: 4.99, H100: 7.49 },
  dramUsdPerGb: 5,
  ssdUsdPerTb: 100,
  hoursAmortised: HOURS_AMORTISED,
  gpusPerNode: 4,
  sources: {
    gpu: 'docs.runcomfy.com/about-billing (Hobby per-hour prices: A10G, A100 80GB, H100 80GB)',
    dram: 'assumed list price, $5/GB RDIMM (info.grcooling.com, 2016: DDR4 ECC $4.70/GB)',
    ssd: 'assumed list price, $100/TB datacenter NVMe',
  },
};

/** Host memory and SSD bought for each node of a configuration. */
export interface MemoryPoint {
  readonly hostGb: number;
  readonly ssdTb: number;
}

/** One configuration the plan prices: `instances` GPUs of `gpu`, with `hostGb` and `ssdTb` in each node. */
export interface PricedConfig extends MemoryPoint {
  readonly gpu: string;
  readonly instances: number;
}

export const nodesFor = (instances: number, p: PlanPrices = PLAN_PRICES): number => Math.ceil(instances / p.gpusPerNode);

/** $/h of `instances` GPUs of `gpu` with `hostGb` of DRAM and `ssdTb` of NVMe in each node. */
export function hourlyCost({ gpu, instances, hostGb, ssdTb }: PricedConfig, p: PlanPrices = PLAN_PRICES): number {
  const perNode = (hostGb * p.dramUsdPerGb + ssdTb * p.ssdUsdPerTb) / p.hoursAmortised;
  return instances * p.gpuHourUsd[gpu] + nodesFor(instances, p) * perNode;
}

/** The formula and prices as a results file records them. */
export interface PlanCostModel {
  readonly usd_per_hour: string;
  readonly gpu_usd_per_hour: Readonly<Record<string, number>>;
  readonly dram_usd_per_gb: number;
  readonly ssd_usd_per_tb: number;
  readonly amortised_hours: number;
  readonly gpus_per_node: number;
  readonly sources: Readonly<Record<string, string>>;
}

export const costModel = (p: PlanPrices = PLAN_PRICES): PlanCostModel => ({
  usd_per_hour: 'instances × GPU $/h + nodes × (host GB × DRAM $/GB + SSD TB × SSD $/TB) / amortised hours',
  gpu_usd_per_hour: p.gpuHourUsd,
  dram_usd_per_gb: p.dramUsdPerGb,
  ssd_usd_per_tb: p.ssdUsdPerTb,
  amortised_hours: p.hoursAmortised,
  gpus_per_node: p.gpusPerNode,
  sources: p.sources,
});

/** Dollars to the cent, as the results file writes them. */
export const roundUsd = (x: number): number => Math.round(x * 100) / 100;
