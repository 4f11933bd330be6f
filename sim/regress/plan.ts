import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../hdl-gen/gen/sources';

/**
 * The long regression (`make regress`, scripts/regress.ts): every run as the `rnic cosim` arguments
 * it takes, from one seed, the workload scaled by `scale`. The mutation campaign
 * (sim/mutation/campaign.ts) measures what these runs catch, from the same table.
 */
export interface RegressRun {
  readonly name: string;
  /** `rnic cosim` arguments, without --seed. */
  readonly args: readonly string[];
  /** The generated modules the run simulates (its DUTs; what they instantiate runs too). */
  readonly tops: readonly string[];
  /** A scenario file: exit status 2 with "cannot run on the RTL" means refused, not failed. */
  readonly scenario?: string;
}

export const REGRESS_WIDTHS = [8, 64] as const;

/** The example scenarios, in a fixed order. */
export function exampleFiles(): string[] {
  const dir = join(REPO_ROOT, 'examples');
  return [...readdirSync(dir).filter((f) => f.endsWith('.json')), ...readdirSync(join(dir, 'faults')).map((f) => `faults/${f}`)].sort().map((f) => `examples/${f}`);
}

export function regressPlan(scale = 1): RegressRun[] {
  const runs: RegressRun[] = [];
  const n = (k: number) => String(k * scale);
  for (const w of REGRESS_WIDTHS) {
    const W = String(w);
    runs.push(
      { name: `rnic_top w${w}`, tops: [`rnic_top_w${w}`], args: ['--dut', 'rnic', '--width', W, '--ops', n(10_000), '--faults', '0.1'] },
      { name: `rx w${w}`, tops: [`ddp_rx_w${w}`], args: ['--dut', 'rx', '--width', W, '--frames', n(30_000), '--faults', '0.1'] },
      { name: `rnic_rx w${w}`, tops: [`rnic_rx_w${w}`], args: ['--dut', 'rnic_rx', '--width', W, '--frames', n(20_000), '--faults', '0.1'] },
      { name: `mpa w${w}`, tops: [`mpa_tx_w${w}`, `mpa_rx_w${w}`], args: ['--dut', 'mpa', '--width', W, '--frames', n(20_000), '--faults', '0.02'] },
      { name: `ddp_rx_hdr w${w}`, tops: [`ddp_rx_hdr_w${w}`], args: ['--dut', 'ddp_rx_hdr', '--width', W, '--frames', n(50_000), '--faults', '0.3'] },
      { name: `crc32c w${w}`, tops: [`crc32c_w${w}`], args: ['--dut', 'crc32c', '--width', W, '--frames', n(200_000)] },
    );
    for (const f of exampleFiles()) runs.push({ name: `scenario ${f} w${w}`, tops: [`rnic_top_w${w}`], scenario: f, args: ['--dut', 'rnic', '--scenario', f, '--width', W] });
  }
  runs.push(
    { name: 'atomic_unit', tops: ['atomic_unit'], args: ['--dut', 'atomic_unit', '--frames', n(100_000)] },
    { name: 'stag_table d1024', tops: ['stag_table_d1024'], args: ['--dut', 'stag_table', '--depth', '1024', '--frames', n(200_000)] },
  );
  return runs;
}
