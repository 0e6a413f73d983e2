import type { LoadResult } from './load';

/** One row of the report. */
export interface Measurement {
  /** Stable identifier that other rows name as their baseline, e.g. "proxy.bare". */
  id: string;
  /** What was measured, as printed. */
  label: string;
  result: LoadResult;
  /** Ids of the rows this one is compared against: the ratio printed is req/s ÷ their req/s. */
  baselines?: string[];
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

/**
 * Renders all measurements as one plain-text table. Rows are numbered; a ratio names its baseline
 * by row number ("0.42× #1"). Ratios are reported, never judged: a benchmark is not a test.
 */
export function renderTable(measurements: Measurement[]): string {
  const rowNumber = new Map(measurements.map((m, index) => [m.id, index + 1]));
  const byId = new Map(measurements.map((m) => [m.id, m]));

  const columns: { title: string; right: boolean; cell: (m: Measurement, index: number) => string }[] = [
    { title: '#', right: true, cell: (_m, index) => String(index + 1) },
    { title: 'case', right: false, cell: (m) => m.label },
    { title: 'req/s', right: true, cell: (m) => integer.format(m.result.requestsPerSecond) },
    {
      title: 'rounds min–max',
      right: true,
      cell: (m) =>
        `${integer.format(Math.min(...m.result.roundRequestsPerSecond))}–${integer.format(Math.max(...m.result.roundRequestsPerSecond))}`,
    },
    { title: 'p50 ms', right: true, cell: (m) => ms(m.result.p50Ms) },
    { title: 'p99 ms', right: true, cell: (m) => ms(m.result.p99Ms) },
    { title: 'CPU µs/req', right: true, cell: (m) => integer.format(m.result.cpuMicrosPerRequest) },
    {
      title: 'ratio (req/s ÷ baseline)',
      right: false,
      cell: (m) => {
        const ratios = (m.baselines ?? []).map((id) => {
          const baseline = byId.get(id);
          if (!baseline) return `? (no row "${id}")`;
          const ratio = m.result.requestsPerSecond / baseline.result.requestsPerSecond;
          return `${Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a'}× #${rowNumber.get(id)}`;
        });
        return ratios.length > 0 ? ratios.join(', ') : 'baseline';
      },
    },
    { title: 'non-2xx/err', right: true, cell: (m) => integer.format(m.result.failed) },
  ];

  const rows = measurements.map((m, index) => columns.map((column) => column.cell(m, index)));
  const widths = columns.map(({ title }, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (columns[i]!.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    line(columns.map((column) => column.title)),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...rows.map(line),
  ].join('\n');
}
