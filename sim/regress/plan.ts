import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { PACKAGE_ROOT } from '../../hdl-gen/gen/paths';
import { cosimDut, type CosimOption } from '../cosim/registry';

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

const DEFAULT_WIDTH = 8;
/** The configuration of the host-memory-over-AXI4 runs: 4 QPs, as the test and the bench take it. */
const AXI4_MEMORY_CONFIG = 'examples/configs/axi4-memory.json';
const DEFAULT_DEPTH = 256;

/**
 * One run of `dut` with `options` (in the order given): the registry (sim/cosim/registry.ts) says
 * which options the DUT takes, so a run that gives one it does not take is an error here, not at
 * run time; and it names the modules the run simulates.
 */
function planned(name: string, dut: string, options: Partial<Record<CosimOption, string>>, scenario?: string): RegressRun {
  const d = cosimDut(dut);
  if (!d) throw new Error(`regression run '${name}': no DUT '${dut}'`);
  for (const o of Object.keys(options)) if (!d.options.includes(o as CosimOption)) throw new Error(`regression run '${name}': --${o} does not apply to --dut ${dut}`);
  const tops = d.modules({ width: Number(options.width ?? DEFAULT_WIDTH), depth: Number(options.depth ?? DEFAULT_DEPTH), qps: Number(options.qps ?? 1) });
  return { name, tops, args: ['--dut', dut, ...Object.entries(options).flatMap(([k, v]) => [`--${k}`, v!])], ...(scenario && { scenario }) };
}

/** The example scenarios, in a fixed order. */
export function exampleFiles(): string[] {
  const dir = join(PACKAGE_ROOT, 'examples');
  return [...readdirSync(dir).filter((f) => f.endsWith('.json')), ...readdirSync(join(dir, 'faults')).map((f) => `faults/${f}`)].sort().map((f) => `examples/${f}`);
}

export function regressPlan(scale = 1): RegressRun[] {
  const runs: RegressRun[] = [];
  const n = (k: number) => String(k * scale);
  for (const w of REGRESS_WIDTHS) {
    const width = String(w);
    runs.push(
      planned(`rnic_top w${w}`, 'rnic', { width, ops: n(10_000), faults: '0.1' }),
      // The integrator's top: every QP and STag through the AXI4-Lite registers.
      planned(`rnic_top_axil w${w}`, 'rnic_axil', { width, ops: n(2000), faults: '0.1' }),
      // Host memory over AXI4 (rnic_top_axi_mem): the slave pauses and answers out of order.
      { ...planned(`rnic_top_axi_mem w${w}`, 'rnic', { width, config: AXI4_MEMORY_CONFIG, ops: n(2000), faults: '0.1' }), tops: [`rnic_top_axi_mem_w${w}`] },
      // The order across streams the per-stream scoreboards cannot see: every arbiter takes turns.
      planned(`rnic_fairness w${w}`, 'rnic_fairness', { width }),
      planned(`rx w${w}`, 'rx', { width, frames: n(30_000), faults: '0.1' }),
      planned(`rnic_rx w${w}`, 'rnic_rx', { width, frames: n(20_000), faults: '0.1' }),
      planned(`mpa w${w}`, 'mpa', { width, frames: n(20_000), faults: '0.02' }),
      // The mpa_rx the top shares: segments of every size in random QP order (the top sends
      // MULPDU-sized FPDUs of at least a DDP header, one per segment).
      planned(`mpa_rx w${w} q${DEFAULT_CONFIG.qps}`, 'mpa_rx', { width, qps: String(DEFAULT_CONFIG.qps), frames: n(20_000), faults: '0.1' }),
      // The reassembly the top shares: ULPDUs in segments of any size, streams restarted part way.
      planned(`ulpdu_reasm w${w} q${DEFAULT_CONFIG.qps}`, 'ulpdu_reasm', { width, qps: String(DEFAULT_CONFIG.qps), frames: n(5000) }),
      // The transmit blocks by their own harnesses: their contracts the top masks (idle while a
      // beat is offered) and long stalls behind m_axis; and the ones the top shares among its QPs,
      // so the mutation campaign judges those by their own runs too (the top alone sends few
      // short segments and no long stalls).
      planned(`ddp_tx w${w}`, 'ddp_tx', { width, frames: n(2000) }),
      planned(`ddp_tx w${w} q${DEFAULT_CONFIG.qps}`, 'ddp_tx', { width, qps: String(DEFAULT_CONFIG.qps), frames: n(2000) }),
      planned(`rdmap_tx_resp w${w}`, 'rdmap_tx_resp', { width, frames: n(2000) }),
      planned(`rdmap_tx_resp w${w} q${DEFAULT_CONFIG.qps}`, 'rdmap_tx_resp', { width, qps: String(DEFAULT_CONFIG.qps), frames: n(2000) }),
      // The mpa_tx the top shares among its QPs, interleaved by its own harness.
      planned(`mpa_tx w${w} q${DEFAULT_CONFIG.qps}`, 'mpa_tx', { width, qps: String(DEFAULT_CONFIG.qps), frames: n(20_000) }),
      planned(`ddp_rx_hdr w${w}`, 'ddp_rx_hdr', { width, frames: n(50_000), faults: '0.3' }),
      planned(`crc32c w${w}`, 'crc32c', { width, frames: n(200_000) }),
    );
    for (const f of exampleFiles()) runs.push(planned(`scenario ${f} w${w}`, 'rnic', { scenario: f, width }, f));
  }
  runs.push(
    planned('atomic_unit', 'atomic_unit', { frames: n(100_000) }),
    planned('stag_table d1024', 'stag_table', { depth: '1024', frames: n(200_000) }),
    // The depth the top instantiates, so the mutation campaign judges that table by its own run.
    planned(`stag_table d${DEFAULT_CONFIG.stagDepth}`, 'stag_table', { depth: String(DEFAULT_CONFIG.stagDepth), frames: n(200_000) }),
  );
  return runs;
}
