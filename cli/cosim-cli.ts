import { cosimAtomicUnit, type AtomicCosimResult } from '../sim/cosim/atomic-unit';
import { cosimCrc32c, type CrcCosimResult } from '../sim/cosim/crc32c';
import { cosimDdpRxHdr, type DdpRxHdrCosimResult } from '../sim/cosim/ddp-rx-hdr';
import { cosimMpaRx, type MpaRxCosimResult } from '../sim/cosim/mpa-rx';
import { cosimMpaTx, type MpaTxCosimResult } from '../sim/cosim/mpa-tx';
import { cosimRx, measureRxPlacement, type RxCosimResult } from '../sim/cosim/rx';
import { cosimStagTable, type StagTableCosimResult } from '../sim/cosim/stag-table';
import { BLOCK_WIDTHS, DATAPATH_WIDTHS } from '../hdl-gen/gen/config';
import type { DutSelection } from '../sim/cosim/dut';
import { replayCommand } from './replay';
import { UsageError } from './scenario-cli';

export const COSIM_DUTS = ['crc32c', 'mpa_tx', 'mpa_rx', 'mpa', 'ddp_rx_hdr', 'atomic_unit', 'stag_table', 'rx', 'rnic_rx'] as const;

/**
 * `--dut rx`: the receive path ddp_rx_w<W> against the model endpoint, and its placement rate;
 * `--dut rnic_rx`: the same with mpa_rx in front (rnic_rx_w<W>), fed framed TCP payload.
 */
export interface RxDutResult extends RxCosimResult {
  readonly dut: 'rx' | 'rnic_rx';
  /** Back-to-back 4 KiB Write ULPDUs, no back-pressure: payload octets per cycle ÷ width after the first ULPDU. */
  readonly efficiency: number;
  readonly bound: number;
  readonly placementLatency: number;
}

/** `--dut mpa`: both MPA blocks, TX octet for octet and RX FPDU by FPDU (with faults). */
export interface MpaCosimResult {
  readonly dut: 'mpa';
  readonly width: number;
  readonly seed: number;
  readonly frames: number;
  readonly faults: number;
  readonly mismatches: number;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
  readonly payloadBytes: number;
  /** TX at full rate: ULPDU octets per cycle ÷ width, and the best the FPDU overhead allows. */
  readonly efficiency: number;
  readonly bound: number;
  readonly firstMismatch?: unknown;
  readonly tx: MpaTxCosimResult;
  readonly rx: MpaRxCosimResult;
}

export type CosimResult = CrcCosimResult | MpaTxCosimResult | MpaRxCosimResult | MpaCosimResult | DdpRxHdrCosimResult | AtomicCosimResult | StagTableCosimResult | RxDutResult;

export interface CosimArgs {
  readonly dut: string;
  readonly width: number;
  /** STag table entries (stag_table). */
  readonly depth?: number;
  readonly seed: number;
  /** FPDUs / frames; operations for atomic_unit and stag_table; peer messages for rx. */
  readonly frames: number;
  readonly rtl?: string;
  readonly vcd?: string;
  /** Fault probability per FPDU (mpa, mpa_rx), per ULPDU (ddp_rx_hdr) or per message (rx). */
  readonly faults?: number;
  /** Simulator plusargs (a mutation campaign's live mutant). */
  readonly plusargs?: readonly string[];
}

export function runCosim(a: CosimArgs): CosimResult {
  if (!COSIM_DUTS.includes(a.dut as (typeof COSIM_DUTS)[number])) throw new UsageError(`--dut must be one of ${COSIM_DUTS.join(', ')}, got '${a.dut}'`);
  if (!(BLOCK_WIDTHS as readonly number[]).includes(a.width)) throw new UsageError(`--width must be one of ${BLOCK_WIDTHS.join(', ')}, got ${a.width}`);
  if (!Number.isInteger(a.frames) || a.frames < 1) throw new UsageError(`--frames must be a positive integer, got ${a.frames}`);
  if (!Number.isInteger(a.seed) || a.seed < 0 || a.seed > 0xffffffff) throw new UsageError(`--seed must be a 32-bit unsigned integer, got ${a.seed}`);
  const common = { width: a.width, seed: a.seed, ...(a.rtl !== undefined && { rtlDir: a.rtl }), ...(a.vcd !== undefined && { vcd: a.vcd }), ...(a.plusargs && { plusargs: a.plusargs }) };
  try {
    const faults = a.faults ?? 0;
    if (!(faults >= 0 && faults <= 1)) throw new UsageError(`--faults must be a probability from 0 to 1, got ${a.faults}`);
    if (a.dut === 'mpa_rx') return runRx(common, a.frames, faults);
    if (a.dut === 'rx' || a.dut === 'rnic_rx') {
      if (!(DATAPATH_WIDTHS as readonly number[]).includes(a.width)) throw new UsageError(`--width must be one of ${DATAPATH_WIDTHS.join(', ')} for ${a.dut}, got ${a.width}`);
      const res = cosimRx({ ...common, messages: a.frames, faults, mpa: a.dut === 'rnic_rx' });
      const rate = measureRxPlacement(a.width, 4096, 32, a.rtl);
      return { ...res, dut: a.dut, efficiency: rate.efficiency, bound: rate.bound, placementLatency: rate.latency };
    }
    if (a.dut === 'ddp_rx_hdr') return cosimDdpRxHdr({ ...common, ulpdus: a.frames, ...(a.faults !== undefined && { faultRate: faults }) });
    const { width: _w, ...unsized } = common;
    if (a.dut === 'atomic_unit') return cosimAtomicUnit({ ...unsized, operations: a.frames });
    if (a.dut === 'stag_table') {
      const depth = a.depth ?? 256;
      if (!(Number.isInteger(depth) && depth >= 16 && depth <= 65536 && (depth & (depth - 1)) === 0)) throw new UsageError(`--depth must be a power of two from 16 to 65536, got ${a.depth}`);
      return cosimStagTable({ ...unsized, depth, operations: a.frames });
    }
    if (a.dut === 'mpa') {
      const { vcd: _v, ...plain } = common;
      const tx = runTx(plain, a.frames);
      const rx = runRx(plain, a.frames, faults);
      return {
        dut: 'mpa',
        width: a.width,
        seed: a.seed,
        frames: a.frames,
        faults,
        mismatches: tx.mismatches + rx.mismatches,
        cycles: tx.cycles + rx.cycles,
        simCyclesPerSecond: Math.round((tx.cycles + rx.cycles) / (tx.cycles / tx.simCyclesPerSecond + rx.cycles / rx.simCyclesPerSecond)),
        payloadBytes: tx.payloadBytes + rx.payloadBytes,
        efficiency: tx.efficiency,
        bound: tx.bound,
        ...((tx.firstMismatch ?? rx.firstMismatch) && { firstMismatch: tx.firstMismatch ?? rx.firstMismatch }),
        tx,
        rx,
      };
    }
    if (a.dut === 'mpa_tx') return runTx(common, a.frames);
    return cosimCrc32c({ ...common, frames: a.frames });
  } catch (e) {
    // A module name the generator does not know, under --rtl: the user named the wrong module.
    if (a.rtl !== undefined && /^no module/.test((e as Error).message)) throw new UsageError((e as Error).message);
    throw e;
  }
}

/**
 * mpa_rx: correctness (random segments, back-pressure and faults); then, at full rate with one
 * FPDU per segment, the input cycles per FPDU against the cost model.
 */
function runRx(common: { width: number; seed: number } & DutSelection, fpdus: number, faults: number): MpaRxCosimResult {
  const checked = cosimMpaRx({ ...common, fpdus, faults });
  const { vcd: _vcd, ...noVcd } = common;
  const fullRate = cosimMpaRx({ ...noVcd, fpdus: Math.min(fpdus, 1000), sourcePause: 0, sinkPause: 0, segments: 'fpdu' });
  return {
    ...checked,
    mismatches: checked.mismatches + fullRate.mismatches,
    cycleCheck: fullRate.cycleCheck,
    ...(!checked.firstMismatch && fullRate.firstMismatch && { firstMismatch: fullRate.firstMismatch }),
  };
}

/** mpa_tx: correctness under random back-pressure; efficiency and cycles per FPDU at full rate. */
function runTx(common: { width: number; seed: number } & DutSelection, fpdus: number): MpaTxCosimResult {
  const checked = cosimMpaTx({ ...common, fpdus });
  const { vcd: _vcd, ...noVcd } = common;
  const fullRate = cosimMpaTx({ ...noVcd, fpdus, markers: checked.markers, crc: checked.crc, sourcePause: 0, sinkPause: 0 });
  return {
    ...checked,
    mismatches: checked.mismatches + fullRate.mismatches,
    efficiency: fullRate.efficiency,
    bound: fullRate.bound,
    cycleCheck: fullRate.cycleCheck,
    ...(!checked.firstMismatch && fullRate.firstMismatch && { firstMismatch: fullRate.firstMismatch }),
  };
}

/** DUTs whose run --faults shapes. */
const FAULTED: ReadonlySet<string> = new Set(['mpa', 'mpa_rx', 'ddp_rx_hdr', 'rx', 'rnic_rx']);

/** The replay of a block co-simulation: every option that shaped it (cli/replay.ts). */
export function blockReplay(a: CosimArgs): string {
  return replayCommand({
    dut: a.dut,
    ...(a.dut !== 'atomic_unit' && a.dut !== 'stag_table' && { width: a.width }),
    ...(a.dut === 'stag_table' && { depth: a.depth ?? 256 }),
    seed: a.seed,
    frames: a.frames,
    ...(FAULTED.has(a.dut) && { faults: a.faults ?? 0 }),
    ...(a.rtl !== undefined && { rtl: a.rtl }),
    ...(a.plusargs && { plusargs: a.plusargs }),
    trace: ['--vcd', `${a.dut}.vcd`],
  });
}

const isRx = (r: CosimResult): r is RxDutResult => r.dut === 'rx' || r.dut === 'rnic_rx';

export function formatCosim(r: CosimResult): string {
  if (r.dut === 'mpa_tx') return formatMpaTx(r);
  if (r.dut === 'mpa_rx') return formatMpaRx(r);
  if (r.dut === 'ddp_rx_hdr') return formatDdpRxHdr(r);
  if (r.dut === 'atomic_unit') return formatAtomic(r);
  if (r.dut === 'stag_table') return formatStagTable(r);
  if (isRx(r)) return formatRx(r);
  if (r.dut === 'mpa') return [formatMpaTx(r.tx), formatMpaRx(r.rx), r.mismatches ? `MISMATCH: ${r.mismatches}` : 'mpa: TX and RX agree with the model'].join('\n');
  return formatCrc(r);
}

/** Differences from the model plus protocol violations: what makes `rnic cosim` exit 1. */
export function failures(r: CosimResult): number {
  return r.mismatches + (r.dut === 'atomic_unit' ? r.violations.length : isRx(r) ? r.violations : 0);
}

const counts = (o: Readonly<Record<string, number>>): string => Object.entries(o).map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';

function formatDdpRxHdr(r: DdpRxHdrCosimResult): string {
  const lines = [
    `${r.module} (${r.rtl}): ${r.ulpdus} ULPDUs, ${r.inputBeats} input beats, ${r.coverage.payloadPackets} payload packets, RFC 7306 ${r.rfc7306 ? 'on' : 'off'}, seed ${r.seed}`,
    `${r.cycles} cycles; checkHeader outcomes: ${counts(r.coverage.outcomes)}`,
    `error codes: ${counts(r.coverage.errors)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every descriptor and payload octet equals checkHeader',
  ];
  if (r.firstMismatch) lines.push(`first mismatch: ${JSON.stringify(r.firstMismatch).slice(0, 400)}`);
  return lines.join('\n');
}

function formatRx(r: RxDutResult): string {
  const out = [
    `${r.dut === 'rnic_rx' ? `rnic_rx_w${r.width} (mpa_rx into ddp_rx)` : `ddp_rx_w${r.width}`}: ${r.messages} peer messages in ${r.episodes} streams, ${r.ulpdus} ULPDUs${r.dut === 'rnic_rx' ? ` in ${r.fpdus} FPDUs` : ''}, ${r.payloadBytes} tagged payload octets, seed ${r.seed}`,
    `compared one by one: ${r.events} events (completions, Terminates), ${r.responses} response ULPDUs; host memory after every ULPDU`,
    `opcodes: ${counts(r.opcodes)}`,
    `error codes raised: ${counts(r.errorsHit)}`,
    r.errorsMissed.length ? `error codes not raised: ${r.errorsMissed.join('; ')}` : 'every DDP/RDMAP error code of the spec was raised',
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e3).toFixed(0)} k cycles/s; placement of 4 KiB Write ULPDUs: ${(100 * r.efficiency).toFixed(2)}% of the width (bound ${(100 * r.bound).toFixed(2)}%), first write ${r.placementLatency} cycles after the first beat`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every event, response ULPDU and memory octet equals the model',
    r.violations ? `PROTECTION VIOLATIONS: ${r.violations}` : 'protection: no write outside what the STag table and the posted buffers allow',
  ];
  if (r.firstMismatch) out.push(`first mismatch: stream ${r.firstMismatch.episode}, ULPDU ${r.firstMismatch.ulpdu}, ${r.firstMismatch.what}`, `  model ${r.firstMismatch.expected.slice(0, 160)}`, `  RTL   ${r.firstMismatch.actual.slice(0, 160)}`);
  if (r.firstViolation) out.push(`first violation: ${r.firstViolation}`);
  return out.join('\n');
}

function formatAtomic(r: AtomicCosimResult): string {
  const lines = [
    `atomic_unit: ${r.operations} operations (${r.bigEndian ? 'big' : 'little'}-endian targets), ${r.reads} reads, ${r.writes} write-backs, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; coverage: ${counts(r.coverage)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every response, memory access and the final memory equal the model',
    ...r.violations.slice(0, 5).map((v) => `protocol violation: ${v}`),
  ];
  if (r.firstMismatch) lines.push(`first mismatch: ${JSON.stringify(r.firstMismatch)}`);
  return lines.join('\n');
}

function formatStagTable(r: StagTableCosimResult): string {
  const lines = [
    `${r.module}: ${r.lookups} lookups, ${r.invalidates} invalidates, ${r.configs} config writes, latency ${r.latency}, seed ${r.seed}`,
    `${r.cycles} cycles; outcomes: ${counts(r.faultsSeen)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} responses differ from the model` : 'every lookup and invalidate response equals the model, in the cycle the latency says',
  ];
  if (r.firstMismatch) lines.push(`first mismatch: ${JSON.stringify(r.firstMismatch)}`);
  return lines.join('\n');
}

function formatMpaRx(r: MpaRxCosimResult): string {
  const codes = counts(r.errorCodes);
  const lines = [
    `${r.module} (${r.rtl}): ${r.streams} streams, ${r.fpdus} FPDUs, ${r.delivered} delivered, ${r.payloadBytes} ULPDU octets, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; ${r.inputBeatsPerCycle.toFixed(3)} input beats per busy cycle`,
    `first errors compared with the model: ${r.errorsChecked} (${codes})`,
    ...(r.cycleCheck ? [`input cycles per FPDU vs the cost model (full rate, one FPDU per segment): ${r.cycleCheck.within5Percent}/${r.cycleCheck.fpdus} within ±5%, largest error ${(100 * r.cycleCheck.maxError).toFixed(1)}%`] : []),
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every ULPDU, verdict and first error equals the model',
  ];
  if (r.firstMismatch) lines.push(`first mismatch: ${JSON.stringify(r.firstMismatch).slice(0, 400)}`);
  return lines.join('\n');
}

function formatMpaTx(r: MpaTxCosimResult): string {
  const c = r.cycleCheck;
  const lines = [
    `${r.module} (${r.rtl}): ${r.fpdus} FPDUs, ${r.payloadBytes} ULPDU octets, ${r.wireBytes} on the wire; markers ${r.markers ? 'on' : 'off'}, CRC ${r.crc ? 'on' : 'off'}, S0 ${r.s0}, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; at full rate: efficiency ${(100 * r.efficiency).toFixed(2)}% of the width, bound ${(100 * r.bound).toFixed(2)}% (${((100 * r.efficiency) / r.bound).toFixed(2)}% of it)`,
    `cycles per FPDU vs the cost model: ${c.within5Percent}/${c.fpdus} within ±5%, largest error ${(100 * c.maxError).toFixed(1)}%`,
    r.mismatches ? `MISMATCH: ${r.mismatches} FPDUs differ from the model` : 'every FPDU equals the model octet for octet',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: FPDU ${m.fpdu} (ULPDU ${m.ulpduLength} octets, seq ${m.startSeq}), first difference at octet ${m.firstDifference}`);
    lines.push(`  model ${m.expected.slice(Math.max(0, 2 * m.firstDifference - 16), 2 * m.firstDifference + 48)}`);
    lines.push(`  RTL   ${m.actual.slice(Math.max(0, 2 * m.firstDifference - 16), 2 * m.firstDifference + 48)}`);
  }
  return lines.join('\n');
}

function formatCrc(r: CrcCosimResult): string {
  const lines = [
    `${r.module} (${r.rtl}): ${r.frames} frames, ${r.payloadBytes} octets, ${r.flaggedFrames} with a non-contiguous tkeep, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s (build ${r.buildCached ? 'cached' : `${r.buildSeconds.toFixed(1)} s`})`,
    r.mismatches ? `MISMATCH: ${r.mismatches} frames differ from the model` : 'every CRC equals the model',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: frame ${m.frame} (${m.length} octets): model ${m.expected}, RTL ${m.actual}`);
    for (const b of m.beats) lines.push(`  tkeep ${b.tkeep.padEnd(20)} tdata ${b.data}`);
  }
  return lines.join('\n');
}
