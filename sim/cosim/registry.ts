import { BLOCK_WIDTHS, DATAPATH_WIDTHS, type RnicConfig } from '../../hdl-gen/gen/config';
import type { Scenario } from '../../ts-model/scenario/schema';
import type { DutSelection } from '../harness/open-dut';
import { cosimAtomicUnit } from './atomic-unit';
import { formatAtomic, formatCrc, formatDdpRxHdr, formatMpa, formatMpaRx, formatMpaTx, formatRx, formatStagTable } from './block-reports';
import { runMpa, runMpaRx, runMpaTx, runRx } from './block-runs';
import { cosimCrc32c } from './crc32c';
import { cosimDdpRxHdr } from './ddp-rx-hdr';
import { cosimDdpRxPlace, type DdpRxPlaceResult } from './ddp-rx-place';
import { cosimDdpTx, type TxCosimResult } from './ddp-tx';
import { cosimRdmapTxResp, type RespCosimResult } from './rdmap-tx-resp';
import { formatRnicCosim, formatScenarioCosim, runRnicCosim, runScenarioCosim } from './rnic-run';
import { cosimStagTable } from './stag-table';

/**
 * Every DUT `rnic cosim --dut D` can co-simulate, as data: its name, the widths it is generated at,
 * the options that shape its run, how to run it, how to report it and what counts as a failure.
 * The CLI (cli/cosim-command.ts) dispatches through it and rejects an option a DUT does not take;
 * the replay line (cli/replay.ts) writes exactly the options a DUT takes; the regression
 * (sim/regress/plan.ts) checks its runs against it and takes the modules each run simulates from it.
 */

/** The options a DUT may take, beyond those every run takes (--dut, --seed, --rtl, --plusarg, --json). */
export type CosimOption = 'width' | 'depth' | 'frames' | 'ops' | 'faults' | 'scenario' | 'random' | 'config' | 'trace' | 'out' | 'vcd';

/** A run's arguments, checked and with every default applied (cli/cosim-command.ts). */
export interface CosimArgs {
  readonly width: number;
  readonly depth: number;
  readonly seed: number;
  readonly frames: number;
  readonly ops: number;
  /** The DUT's `faults` default when not given. */
  readonly faults: number;
  readonly rtl?: string;
  readonly vcd?: string;
  readonly plusargs?: readonly string[];
  /** rnic: the generator configuration (from --config), and the scenario of --scenario. */
  readonly config: RnicConfig;
  readonly scenario?: Scenario;
  readonly trace: boolean;
  readonly out: string;
  /** rnic: pcaps and a traced replay on a failure (default true). */
  readonly evidence: boolean;
  readonly progress?: (done: number, total: number) => void;
}

/** What a run found, for the CLI to print and the regression to count. */
export interface CosimRun {
  /** The result object (--json prints it with the replay line added). */
  readonly result: object;
  /** The text report; `replay` is the command that reruns it. */
  text(replay: string): string;
  /** Differences from the model plus protocol violations: what makes `rnic cosim` exit 1. */
  readonly failures: number;
  /** The first difference or violation in one line (empty when none), and its cycle when known. */
  readonly first: string;
  readonly cycle: number | null;
}

export interface CosimDut {
  readonly name: string;
  /** One line for the help text and error messages. */
  readonly about: string;
  /** The widths it is generated at; null: it has no width (atomic_unit, stag_table). */
  readonly widths: readonly number[] | null;
  readonly options: readonly CosimOption[];
  /** Fault probability when --faults is not given (DUTs that take it). */
  readonly faults?: number;
  /** The generated modules a run simulates (the mutation campaign picks runs by them). */
  modules(a: Pick<CosimArgs, 'width' | 'depth'>): string[];
  run(a: CosimArgs): CosimRun;
}

/** The harness options that choose and open the DUT. */
const selection = (a: CosimArgs): DutSelection => ({
  ...(a.rtl !== undefined && { rtlDir: a.rtl }),
  ...(a.vcd !== undefined && { vcd: a.vcd }),
  ...(a.plusargs && { plusargs: a.plusargs }),
});

/** A block's report: the text leads with the result, then the replay line when it failed. */
function block<R extends { readonly mismatches: number; readonly firstMismatch?: { readonly cycle: number } | null }>(
  r: R,
  format: (r: R) => string,
  failures = r.mismatches,
): CosimRun {
  const m = r.firstMismatch;
  return {
    result: r,
    text: (replay) => format(r) + (failures > 0 ? `\nreplay: ${replay}` : ''),
    failures,
    first: m ? JSON.stringify(m).slice(0, 200) : '',
    cycle: m ? m.cycle : null,
  };
}

const counts = (o: Readonly<Record<string, number>>): string => Object.entries(o).map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';

const formatTx = (what: string) => (r: (TxCosimResult | RespCosimResult) & { readonly width: number }): string => {
  const m = r.firstMismatch;
  return [
    `${r.module}: ${r.ulpdus} ULPDUs of ${what}, seed ${r.seed}; coverage: ${counts(r.coverage as unknown as Record<string, number>)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every ULPDU octet equals the model',
    ...(m ? [`first mismatch at cycle ${m.cycle}: ${m.what} ${m.index}`, `  model ${m.expected.slice(0, 160)}`, `  RTL   ${m.actual.slice(0, 160)}`] : []),
  ].join('\n');
};

function formatPlace(r: DdpRxPlaceResult): string {
  const m = r.firstMismatch;
  return [
    `${r.module}: ${r.packets} packets, ${r.placed} placed, ${r.octets} octets, ${r.writeBeats}/${r.expectedWriteBeats} write beats; coverage: ${counts(r.coverage)}`,
    r.violations || r.memoryMismatches ? `MISMATCH: ${r.violations} violations, ${r.memoryMismatches} octets of memory differ` : 'every octet placed where its command says, and nowhere else',
    ...(m ? [`first mismatch at cycle ${m.cycle}: ${m.what}`, `  model ${m.expected.slice(0, 160)}`, `  RTL   ${m.actual.slice(0, 160)}`] : []),
  ].join('\n');
}

const placeFailures = (r: DdpRxPlaceResult): number => r.violations + r.memoryMismatches + (r.writeBeats !== r.expectedWriteBeats ? 1 : 0);

const BLOCK_OPTIONS: readonly CosimOption[] = ['width', 'frames', 'vcd'];

export const COSIM_DUTS: readonly CosimDut[] = [
  {
    name: 'rnic',
    about: '(default) the whole datapath rnic_top_w<W>, every QP; or --scenario',
    widths: DATAPATH_WIDTHS,
    options: ['width', 'ops', 'faults', 'random', 'scenario', 'config', 'trace', 'out'],
    faults: 0.05,
    modules: ({ width }) => [`rnic_top_w${width}`],
    run: (a) => {
      const common = { width: a.width, config: a.config, seed: a.seed, out: a.out, trace: a.trace, evidence: a.evidence, ...(a.rtl !== undefined && { rtl: a.rtl }), ...(a.plusargs && { plusargs: a.plusargs }) };
      if (a.scenario) {
        const r = runScenarioCosim({ ...common, scenario: a.scenario });
        const m = r.firstMismatch;
        return { result: r, text: (replay) => formatScenarioCosim(r, replay), failures: r.mismatches + r.violations, first: m ? m.what : r.firstViolation ?? '', cycle: m?.cycle ?? null };
      }
      const r = runRnicCosim({ ...common, ops: a.ops, faults: a.faults, ...(a.progress && { progress: a.progress }) });
      const m = r.firstMismatch;
      return { result: r, text: (replay) => formatRnicCosim(r, replay), failures: r.mismatches + r.violations, first: m ? `QP ${m.qp}: ${m.what}` : r.firstViolation ?? '', cycle: m?.cycle ?? null };
    },
  },
  {
    name: 'crc32c',
    about: 'the CRC-32C block crc32c_w<W>',
    widths: BLOCK_WIDTHS,
    options: BLOCK_OPTIONS,
    modules: ({ width }) => [`crc32c_w${width}`],
    run: (a) => block(cosimCrc32c({ width: a.width, seed: a.seed, frames: a.frames, ...selection(a) }), formatCrc),
  },
  {
    name: 'mpa_tx',
    about: 'MPA transmit mpa_tx_w<W>, then its rate at full speed',
    widths: BLOCK_WIDTHS,
    options: BLOCK_OPTIONS,
    modules: ({ width }) => [`mpa_tx_w${width}`],
    run: (a) => block(runMpaTx({ width: a.width, seed: a.seed, ...selection(a) }, a.frames), formatMpaTx),
  },
  {
    name: 'mpa_rx',
    about: 'MPA receive mpa_rx_w<W> with faults, then its full-speed rate',
    widths: BLOCK_WIDTHS,
    options: [...BLOCK_OPTIONS, 'faults'],
    faults: 0,
    modules: ({ width }) => [`mpa_rx_w${width}`],
    run: (a) => block(runMpaRx({ width: a.width, seed: a.seed, ...selection(a) }, a.frames, a.faults), formatMpaRx),
  },
  {
    name: 'mpa',
    about: 'both MPA blocks, mpa_tx_w<W> and mpa_rx_w<W>',
    widths: BLOCK_WIDTHS,
    options: ['width', 'frames', 'faults'],
    faults: 0,
    modules: ({ width }) => [`mpa_tx_w${width}`, `mpa_rx_w${width}`],
    run: (a) => block(runMpa({ width: a.width, seed: a.seed, ...selection(a) }, a.frames, a.faults), formatMpa),
  },
  {
    name: 'ddp_rx_hdr',
    about: 'DDP/RDMAP header checks ddp_rx_hdr_w<W> (H1-H7), header faults',
    widths: BLOCK_WIDTHS,
    options: [...BLOCK_OPTIONS, 'faults'],
    faults: 0.5,
    modules: ({ width }) => [`ddp_rx_hdr_w${width}`],
    run: (a) => block(cosimDdpRxHdr({ width: a.width, seed: a.seed, ulpdus: a.frames, faultRate: a.faults, ...selection(a) }), formatDdpRxHdr),
  },
  {
    name: 'ddp_rx_place',
    about: 'placement ddp_rx_place_w<W>: packets into host memory',
    widths: DATAPATH_WIDTHS,
    options: BLOCK_OPTIONS,
    modules: ({ width }) => [`ddp_rx_place_w${width}`],
    run: (a) => {
      const r = cosimDdpRxPlace({ width: a.width, seed: a.seed, packets: a.frames, ...selection(a) });
      return block({ dut: 'ddp_rx_place', ...r, mismatches: placeFailures(r) }, formatPlace);
    },
  },
  {
    name: 'ddp_tx',
    about: 'requester ddp_tx_w<W>: every kind of work request (MULPDU 1460)',
    widths: DATAPATH_WIDTHS,
    options: BLOCK_OPTIONS,
    modules: ({ width }) => [`ddp_tx_w${width}`],
    run: (a) => block({ dut: 'ddp_tx', width: a.width, ...cosimDdpTx({ width: a.width, seed: a.seed, requests: a.frames, mulpdu: 1460, dut: selection(a) }) }, formatTx('work requests')),
  },
  {
    name: 'rdmap_tx_resp',
    about: 'responder rdmap_tx_resp_w<W>: Read/Atomic Responses, Terminates',
    widths: DATAPATH_WIDTHS,
    options: BLOCK_OPTIONS,
    modules: ({ width }) => [`rdmap_tx_resp_w${width}`],
    run: (a) => block({ dut: 'rdmap_tx_resp', width: a.width, ...cosimRdmapTxResp({ width: a.width, seed: a.seed, requests: a.frames, mulpdu: 1460, dut: selection(a) }) }, formatTx('responses')),
  },
  {
    name: 'atomic_unit',
    about: 'the RFC 7306 atomic unit: FetchAdd, CmpSwap on its memory',
    widths: null,
    options: ['frames', 'vcd'],
    modules: () => ['atomic_unit'],
    run: (a) => {
      const r = cosimAtomicUnit({ seed: a.seed, operations: a.frames, ...selection(a) });
      return block(r, formatAtomic, r.mismatches + r.violations.length);
    },
  },
  {
    name: 'stag_table',
    about: 'the STag table stag_table_d<N> (--depth)',
    widths: null,
    options: ['depth', 'frames', 'vcd'],
    modules: ({ depth }) => [`stag_table_d${depth}`],
    run: (a) => block(cosimStagTable({ depth: a.depth, seed: a.seed, operations: a.frames, ...selection(a) }), formatStagTable),
  },
  {
    name: 'rx',
    about: 'receive path ddp_rx_w<W> against the model endpoint',
    widths: DATAPATH_WIDTHS,
    options: [...BLOCK_OPTIONS, 'faults'],
    faults: 0,
    modules: ({ width }) => [`ddp_rx_w${width}`],
    run: (a) => {
      const r = runRx({ width: a.width, seed: a.seed, ...selection(a) }, 'rx', a.frames, a.faults);
      return block(r, formatRx, r.mismatches + r.violations);
    },
  },
  {
    name: 'rnic_rx',
    about: 'rnic_rx_w<W>: mpa_rx in front of ddp_rx, fed TCP payload',
    widths: DATAPATH_WIDTHS,
    options: [...BLOCK_OPTIONS, 'faults'],
    faults: 0,
    modules: ({ width }) => [`rnic_rx_w${width}`],
    run: (a) => {
      const r = runRx({ width: a.width, seed: a.seed, ...selection(a) }, 'rnic_rx', a.frames, a.faults);
      return block(r, formatRx, r.mismatches + r.violations);
    },
  },
];

/** The DUT of that name, or undefined. */
export function cosimDut(name: string): CosimDut | undefined {
  return COSIM_DUTS.find((d) => d.name === name);
}
