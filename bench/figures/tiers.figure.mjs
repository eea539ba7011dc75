// tiers: throughput of each KV tier operation next to its hardware limit and the baselines.
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const rows = [
    // Files written before the limits were measured per operation have one memcpy figure.
    ['memcpy (get-shaped)', r.limits.memcpy_get_gbs ?? r.limits.memcpy_gbs],
    ['host get', r.host.get_gbs],
    ['memcpy (put-shaped)', r.limits.memcpy_put_gbs ?? r.limits.memcpy_gbs],
    ['host put', r.host.put_gbs],
    ['raw O_DIRECT read', r.limits.raw_read_gbs],
    ['SSD pool get', r.ssd.get_gbs],
    ['raw O_DIRECT write', r.limits.raw_write_gbs],
    ['SSD pool put', r.ssd.put_gbs],
    ['file/chunk cold', r.file_per_chunk.get_cold_gbs],
    ['file/chunk warm', r.file_per_chunk.get_warm_gbs],
    ...(r.redis?.get_gbs !== undefined ? [['Redis get', r.redis.get_gbs]] : []),
  ].map(([operation, gbs]) => ({ operation, gbs }));
  return figureSpec(
    `KV tiers, ${r.chunks} × ${Math.round(r.chunk_bytes / 2 ** 20)} MiB chunks (medians of ${r.reps})`,
    groupedBars({
      rows,
      category: 'operation',
      value: 'gbs',
      valueTitle: 'GB/s',
      horizontal: true,
      categoryOrder: rows.map((x) => x.operation),
      width: 420,
      height: 22 * rows.length,
      format: '.2f',
    }),
  );
}
