import { BLOCK_WIDTHS, DATAPATH_WIDTHS, type RnicConfig } from '../../hdl-gen/gen/config';
import type { Scenario } from '../../ts-model/scenario/schema';
import type { DutSelection } from '../harness/open-dut';
import { cosimAtomicUnit } from './atomic-unit';
import { formatAtomic, formatCrc, formatDdpRxHdr, formatFairness, formatMpa, formatMpaRx, formatMpaRxShared, formatMpaTx, formatUlpduReasm, formatRx, formatStagTable } from './block-reports';
import { runMpa, runMpaRx, runMpaTx, runRx } from './block-runs';
import { cosimCrc32c } from './crc32c';
import { cosimDdpRxHdr } from './ddp-rx-hdr';
import { cosimDdpRxPlace, type DdpRxPlaceResult } from './ddp-rx-place';
import { cosimDdpTx, type TxCosimResult } from './ddp-tx';
import { cosimDdpTxShared, type SharedCosimResult } from './ddp-tx-shared';
import { ddpTxName } from '../../hdl-gen/blocks/ddp-tx';
import { rdmapTxRespName } from '../../hdl-gen/blocks/rdmap-tx-resp';
import { cosimRdmapTxResp, type RespCosimResult } from './rdmap-tx-resp';
import { cosimRnicFairness } from './rnic-fairness';
import { formatRnicCosim, formatScenarioCosim, runRnicCosim, runScenarioCosim, type RnicRunArgs } from './rnic-run';
import { cosimStagTable } from './stag-table';
import { mpaTxName } from '../../hdl-gen/blocks/mpa-tx';
import { mpaRxName } from '../../hdl-gen/blocks/mpa-rx';
import { cosimMpaRxShared } from './mpa-rx-shared';
import { ulpduReasmName } from '../../hdl-gen/blocks/ulpdu-reasm';
import { cosimUlpduReasm } from './ulpdu-reasm';
import type { TraceFormat } from '../verilator/build';
import type { TraceWindow } from '../verilator/model';

/**
 * Every DUT `rnic cosim --dut D` can co-simulate, as data: its name, the widths it is generated at,
 * the options that shape its run, how to run it, how to report it and what counts as a failure.
 * The CLI (cli/cosim-command.ts) dispatches through it and rejects an option a DUT does not take;
 * the replay line (cli/replay.ts) writes exactly the options a DUT takes; the regression
 * (sim/regress/plan.ts) checks its runs against it and takes the modules each run simulates from it.
 */

/** The options a DUT may take, beyond those every run takes (--dut, --seed, --rtl, --plusarg, --json). */
export type CosimOption = 'width' | 'depth' | 'qps' | 'frames' | 'ops' | 'faults' | 'scenario' | 'random' | 'config' | 'trace' | 'trace-dir' | 'out' | 'vcd';

/** A run's arguments, checked and with every default applied (cli/cosim-command.ts). */
export interface CosimArgs {
  readonly width: number;
  readonly depth: number;
  /** mpa_tx, ddp_tx: the QPs sharing it (<block>_w<W>_q<N> when above 1). */
  readonly qps: number;
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
  /** rnic: where to write the transaction traces of both sides (sim/cosim/trace.ts). */
  readonly traceDir?: string;
  /** rnic --trace: the waveform's format (FST unless --trace-vcd). */
  readonly traceFormat?: TraceFormat;
  /** --trace or --vcd: the cycles the waveform holds (--trace-from, --trace-to). */
  readonly traceWindow?: TraceWindow;
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
  modules(a: Pick<CosimArgs, 'width' | 'depth' | 'qps'>): string[];
  run(a: CosimArgs): CosimRun;
}

/** The harness options that choose and open the DUT. */
const selection = (a: CosimArgs): DutSelection => ({
  ...(a.rtl !== undefined && { rtlDir: a.rtl }),
  ...(a.vcd !== undefined && { vcd: a.vcd }),
  ...(a.traceWindow && { traceWindow: a.traceWindow }),
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

function formatTxShared(r: SharedCosimResult): string {
  const m = r.firstMismatch;
  return [
    `${r.module}: ${r.ulpdus} ULPDUs of work requests, seed ${r.seed}; coverage: ${counts(r.coverage as unknown as Record<string, number>)}`,
    `fairness: a QP with work waited at most ${r.maxWait} messages of others; ${r.holds.length} holds`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : "every QP's ULPDU octets equal its model endpoint's",
    ...(m ? [`first mismatch at cycle ${m.cycle}, QP ${m.qp}: ${m.what} ${m.index}`, `  model ${m.expected.slice(0, 160)}`, `  RTL   ${m.actual.slice(0, 160)}`] : []),
  ].join('\n');
}

function formatPlace(r: DdpRxPlaceResult): string {
  const m = r.firstMismatch;
  return [
    `${r.module}: ${r.packets} packets, ${r.placed} placed, ${r.octets} octets, ${r.writeBeats}/${r.expectedWriteBeats} write beats; coverage: ${counts(r.coverage)}`,
    r.violations || r.memoryMismatches ? `MISMATCH: ${r.violations} violations, ${r.memoryMismatches} octets of memory differ` : 'every octet placed where its command says, and nowhere else',
    ...(m ? [`first mismatch at cycle ${m.cycle}: ${m.what}`, `  model ${m.expected.slice(0, 160)}`, `  RTL   ${m.actual.slice(0, 160)}`] : []),
  ].join('\n');
}

const placeFailures = (r: DdpRxPlaceResult): number => r.violations + r.memoryMismatches + (r.writeBeats !== r.expectedWriteBeats ? 1 : 0);

/** The harness options every block run takes: its width, seed and DUT. */
const common = (a: CosimArgs) => ({ width: a.width, seed: a.seed, ...selection(a) });

/**
 * A block generated at a width, `<name>_w<W>`: --width, --frames, --vcd, and --faults with its
 * default where `faults` is given.
 */
function widthBlock(name: string, about: string, widths: readonly number[], run: (a: CosimArgs) => CosimRun, faults?: number): CosimDut {
  return {
    name,
    about,
    widths,
    options: ['width', 'frames', 'vcd', ...(faults !== undefined ? (['faults'] as const) : [])],
    ...(faults !== undefined && { faults }),
    modules: ({ width }) => [`${name}_w${width}`],
    run,
  };
}

const rxRun = (dut: 'rx' | 'rnic_rx') => (a: CosimArgs): CosimRun => {
  const r = runRx(common(a), dut, a.frames, a.faults);
  return block(r, formatRx, r.mismatches + r.violations);
};

/** The waveform options of a run of the top (--trace-vcd, --trace-from, --trace-to). */
const waveOf = (a: CosimArgs) => ({ ...(a.traceFormat && { traceFormat: a.traceFormat }), ...(a.traceWindow && { traceWindow: a.traceWindow }) });

/** `rnic cosim --dut rnic` or `rnic_axil`: the random run of the top against the model. */
function rnicRun(a: CosimArgs, c: RnicRunArgs): CosimRun {
  const r = runRnicCosim({ ...c, ops: a.ops, faults: a.faults, ...(a.traceDir !== undefined && { traceDir: a.traceDir }), ...(a.progress && { progress: a.progress }) });
  const m = r.firstMismatch;
  return { result: r, text: (replay) => formatRnicCosim(r, replay), failures: r.mismatches + r.violations, first: m ? `QP ${m.qp}: ${m.what}` : r.firstViolation ?? '', cycle: m?.cycle ?? null };
}

export const COSIM_DUTS: readonly CosimDut[] = [
  {
    name: 'rnic',
    about: '(default) the whole datapath rnic_top_w<W>, every QP; or --scenario',
    widths: DATAPATH_WIDTHS,
    options: ['width', 'ops', 'faults', 'random', 'scenario', 'config', 'trace', 'trace-dir', 'out'],
    faults: 0.05,
    modules: ({ width }) => [`rnic_top_w${width}`],
    run: (a) => {
      const c = { width: a.width, config: a.config, seed: a.seed, out: a.out, trace: a.trace, evidence: a.evidence, ...waveOf(a), ...(a.rtl !== undefined && { rtl: a.rtl }), ...(a.plusargs && { plusargs: a.plusargs }) };
      if (a.scenario) {
        const r = runScenarioCosim({ ...c, scenario: a.scenario, ...(a.traceDir !== undefined && { traceDir: a.traceDir }) });
        const m = r.firstMismatch;
        return { result: r, text: (replay) => formatScenarioCosim(r, replay), failures: r.mismatches + r.violations, first: m ? m.what : r.firstViolation ?? '', cycle: m?.cycle ?? null };
      }
      return rnicRun(a, c);
    },
  },
  {
    name: 'rnic_axil',
    about: 'the integrator\'s top rnic_top_axil_w<W> as rnic runs: every QP and STag configured over AXI4-Lite',
    widths: DATAPATH_WIDTHS,
    options: ['width', 'ops', 'faults', 'config', 'trace', 'trace-dir', 'out'],
    faults: 0.05,
    modules: ({ width }) => [`rnic_top_axil_w${width}`],
    run: (a) => rnicRun(a, { width: a.width, config: a.config, seed: a.seed, out: a.out, trace: a.trace, evidence: a.evidence, axil: true, ...waveOf(a), ...(a.rtl !== undefined && { rtl: a.rtl }), ...(a.plusargs && { plusargs: a.plusargs }) }),
  },
  {
    name: 'rnic_fairness',
    about: 'rnic_top_w<W> with every QP and both queues of each busy at once: the round-robin arbiters take turns',
    widths: DATAPATH_WIDTHS,
    options: ['width', 'vcd'],
    modules: ({ width }) => [`rnic_top_w${width}`],
    run: (a) => block(cosimRnicFairness(common(a)), formatFairness),
  },
  widthBlock('crc32c', 'the CRC-32C block crc32c_w<W>', BLOCK_WIDTHS, (a) => block(cosimCrc32c({ ...common(a), frames: a.frames }), formatCrc)),
  {
    ...widthBlock('mpa_tx', 'MPA transmit mpa_tx_w<W> (mpa_tx_w<W>_q<N> shared by --qps N), then its rate at full speed', BLOCK_WIDTHS, (a) => block(runMpaTx({ ...common(a), qps: a.qps }, a.frames), formatMpaTx)),
    options: ['width', 'qps', 'frames', 'vcd'],
    modules: ({ width, qps }) => [mpaTxName(width, qps)],
  },
  {
    ...widthBlock(
      'mpa_rx',
      'MPA receive mpa_rx_w<W> with faults, then its full-speed rate; mpa_rx_w<W>_q<N> shared by --qps N (as in rnic_top): --frames FPDUs over every QP, segments in random QP order',
      BLOCK_WIDTHS,
      (a) =>
        a.qps > 1
          ? block(cosimMpaRxShared({ ...common(a), qps: a.qps, fpdus: Math.max(1, Math.ceil(a.frames / a.qps)), interleave: 'random', faults: a.faults }), formatMpaRxShared)
          : block(runMpaRx(common(a), a.frames, a.faults), formatMpaRx),
      0,
    ),
    options: ['width', 'qps', 'frames', 'faults', 'vcd'],
    modules: ({ width, qps }) => [mpaRxName(width, qps > 1 ? qps : undefined)],
  },
  {
    name: 'ulpdu_reasm',
    about: 'ulpdu_reasm_w<W>_q<N>, the receive path\'s reassembly shared by --qps N QPs (as in rnic_top): --frames ULPDUs over 8 of them, in random order, some streams restarted part way',
    widths: DATAPATH_WIDTHS,
    options: ['width', 'qps', 'frames', 'vcd'],
    modules: ({ width, qps }) => [ulpduReasmName(width, qps)],
    run: (a) => block(cosimUlpduReasm({ ...common(a), qps: a.qps, ulpdus: Math.max(1, Math.ceil(a.frames / Math.min(8, a.qps))), interleave: 'random', abandon: 0.05 }), formatUlpduReasm),
  },
  {
    name: 'mpa',
    about: 'both MPA blocks, mpa_tx_w<W> and mpa_rx_w<W>',
    widths: BLOCK_WIDTHS,
    options: ['width', 'frames', 'faults'],
    faults: 0,
    modules: ({ width }) => [`mpa_tx_w${width}`, `mpa_rx_w${width}`],
    run: (a) => block(runMpa(common(a), a.frames, a.faults), formatMpa),
  },
  widthBlock(
    'ddp_rx_hdr',
    'DDP/RDMAP header checks ddp_rx_hdr_w<W> (H1-H7), header faults',
    BLOCK_WIDTHS,
    (a) => block(cosimDdpRxHdr({ ...common(a), ulpdus: a.frames, faultRate: a.faults }), formatDdpRxHdr),
    0.5,
  ),
  widthBlock('ddp_rx_place', 'placement ddp_rx_place_w<W>: packets into host memory', DATAPATH_WIDTHS, (a) => {
    const r = cosimDdpRxPlace({ ...common(a), packets: a.frames });
    return block({ dut: 'ddp_rx_place', ...r, mismatches: placeFailures(r) }, formatPlace);
  }),
  {
    ...widthBlock('ddp_tx', 'requester ddp_tx_w<W>: every kind of work request (MULPDU 1460); ddp_tx_w<W>_q<N> shared by --qps N (as in rnic_top), each QP its own MULPDU', DATAPATH_WIDTHS, (a) =>
      a.qps > 1
        ? block({ dut: 'ddp_tx', width: a.width, ...cosimDdpTxShared({ width: a.width, qps: a.qps, seed: a.seed, requests: a.frames, dut: selection(a) }) }, formatTxShared)
        : block({ dut: 'ddp_tx', width: a.width, ...cosimDdpTx({ width: a.width, seed: a.seed, requests: a.frames, mulpdu: 1460, dut: selection(a) }) }, formatTx('work requests')),
    ),
    options: ['width', 'qps', 'frames', 'vcd'],
    modules: ({ width, qps }) => [ddpTxName(width, qps)],
  },
  {
    ...widthBlock('rdmap_tx_resp', 'responder rdmap_tx_resp_w<W>_q<N>: Read/Atomic Responses, Terminates (--qps N: the block rnic_top shares, N = max(its QPs, 2))', DATAPATH_WIDTHS, (a) =>
      block({ dut: 'rdmap_tx_resp', width: a.width, ...cosimRdmapTxResp({ width: a.width, qps: a.qps, seed: a.seed, requests: a.frames, mulpdu: 1460, dut: selection(a) }) }, formatTx('responses')),
    ),
    options: ['width', 'qps', 'frames', 'vcd'],
    modules: ({ width, qps }) => [rdmapTxRespName(width, qps)],
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
  { ...widthBlock('rx', 'receive path ddp_rx_w<W> against the model endpoint', DATAPATH_WIDTHS, rxRun('rx'), 0), modules: ({ width }) => [`ddp_rx_w${width}`] },
  widthBlock('rnic_rx', 'rnic_rx_w<W>: mpa_rx in front of ddp_rx, fed TCP payload', DATAPATH_WIDTHS, rxRun('rnic_rx'), 0),
];

/** The DUT of that name, or undefined. */
export function cosimDut(name: string): CosimDut | undefined {
  return COSIM_DUTS.find((d) => d.name === name);
}
