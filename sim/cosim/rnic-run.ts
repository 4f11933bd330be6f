import { join } from 'node:path';
import type { TraceFormat } from '../verilator/build';
import type { TraceWindow } from '../verilator/model';
import type { RnicConfig } from '../../hdl-gen/gen/config';
import type { Scenario } from '../../ts-model/scenario/schema';
import { cosimRnic, type RnicCosimResult } from './rnic';
import { topModuleOf } from './rnic-axi-bench';
import { cosimScenario, type ScenarioCosimResult } from './rnic-scenario';
import { mismatchPlace, writeLine } from './scoreboard';

/**
 * `rnic cosim --dut rnic` (the default): the whole datapath rnic_top_w<W> against the model on a
 * random workload from a seed, or a scenario file with the RTL as its responder. On a failure the
 * evidence goes to `out`: the pcaps of the first mismatching QP as the RTL and as the model sent
 * it, and a VCD of the same run replayed from its seed (unless `trace` already made one).
 */
export interface RnicRunArgs {
  readonly width: number;
  readonly config: RnicConfig;
  readonly seed: number;
  readonly rtl?: string;
  readonly trace?: boolean;
  readonly out: string;
  readonly plusargs?: readonly string[];
  /** On a failure: pcaps of the first failing QP and a traced replay (default true). */
  readonly evidence?: boolean;
  /** Where to write the transaction traces of both sides (trace.ts); on a failure they go to `out`. */
  readonly traceDir?: string;
  /** The waveform's format (default FST) and, for `trace`, its cycles (default all). */
  readonly traceFormat?: TraceFormat;
  readonly traceWindow?: TraceWindow;
  /** The integrator's top rnic_top_axil_w<W>, configured over AXI4-Lite (rnic-bench.ts). */
  readonly axil?: boolean;
}

/**
 * The waveform of a failing run's replay: the cycles before its first mismatch (enough for a few
 * operations of the QP that failed) and a few after, not the whole run.
 */
export const FAILURE_WINDOW = { before: 20_000, after: 2_000 } as const;

export interface RnicCosimReport extends RnicCosimResult {
  /** The waveform file (FST or VCD), when one was written. */
  readonly waveform: string | null;
}

export function runRnicCosim(a: RnicRunArgs & { readonly ops: number; readonly faults: number; readonly progress?: (done: number, total: number) => void }): RnicCosimReport {
  // Named after the top that ran, as the transaction traces are.
  const top = a.axil ? `rnic_top_axil_w${a.width}` : topModuleOf(a.width, a.config);
  const waveFile = join(a.out, `${top}-seed${a.seed}.${a.traceFormat ?? 'fst'}`);
  const base = {
    width: a.width,
    seed: a.seed,
    ops: a.ops,
    faults: a.faults,
    config: { ...a.config, width: a.width as RnicConfig['width'] },
    ...(a.rtl !== undefined && { rtlDir: a.rtl }),
    ...(a.plusargs && { plusargs: a.plusargs }),
    ...(a.axil && { axil: true }),
  };
  const evidence = a.evidence ?? true;
  const res: RnicCosimResult = cosimRnic({ ...base, ...(evidence && { evidenceDir: a.out }), ...(a.trace && { vcd: waveFile, ...(a.traceWindow && { traceWindow: a.traceWindow }) }), ...(a.traceDir !== undefined && { traceDir: a.traceDir }), ...(a.progress && { onProgress: a.progress }) });
  let waveform = a.trace ? waveFile : null;
  let traces = res.traces;
  if (evidence && (!a.trace || a.traceDir === undefined) && (res.mismatches || res.violations)) {
    // The run is deterministic: the same seed again up to the first failure, with the waveform
    // and the transaction traces the first run did not make.
    const at = res.firstMismatch?.cycle;
    const window = at !== undefined ? { from: Math.max(0, at - FAILURE_WINDOW.before), to: at + FAILURE_WINDOW.after } : undefined;
    const again = cosimRnic({ ...base, ops: res.ops, ...(!a.trace && { vcd: waveFile, ...(window && { traceWindow: window }) }), ...(a.traceDir === undefined && { traceDir: a.out }) });
    waveform = waveFile;
    if (a.traceDir === undefined) traces = again.traces;
  }
  return { ...res, waveform, traces };
}

/**
 * `rnic cosim --scenario F`: the scenario with the RTL as its responder (rnic-scenario.ts). The run
 * records its transaction traces as it goes (no replay): to `traceDir`, else on a failure to `out`.
 */
export type ScenarioCosimReport = ScenarioCosimResult & { readonly waveform: string | null };

export function runScenarioCosim(a: RnicRunArgs & { readonly scenario: Scenario }): ScenarioCosimReport {
  const waveform = a.trace ? join(a.out, `rnic_top_w${a.width}-scenario.${a.traceFormat ?? 'fst'}`) : null;
  const run = cosimScenario(a.scenario, {
    width: a.width,
    seed: a.seed,
    config: { ...a.config, width: a.width as RnicConfig['width'] },
    ...(a.evidence !== false && { evidenceDir: a.out }),
    ...(a.traceDir !== undefined && { traceDir: a.traceDir }),
    ...(a.rtl !== undefined && { rtlDir: a.rtl }),
    ...(waveform && { vcd: waveform, ...(a.traceWindow && { traceWindow: a.traceWindow }) }),
    ...(a.plusargs && { plusargs: a.plusargs }),
  });
  return { ...run, waveform };
}

const counts = (o: Readonly<Record<string, number>>): string => Object.entries(o).map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';

export function formatScenarioCosim(r: ScenarioCosimReport, replay: string): string {
  const lines = [
    `${r.module}, QP 0 as the responder of scenario '${r.scenario}': ${r.ops} ops, ${r.fpdusIn} FPDUs in, ${r.fpdusOut} out, ${r.workRequests} work requests, ${r.events} responder events`,
    `${r.cycles} cycles; memory compared ${r.memoryChecks} times (each FPDU's placements; every buffer and region after each completion and at the end)`,
    r.mismatches ? `FAIL: ${r.mismatches} differences from the model` : 'PASS: every FPDU, completion and region equals the model\'s responder',
    r.violations ? `FAIL: ${r.violations} protection violations` : 'protection: no write outside the responder\'s placements',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: ${mismatchPlace(m)}: ${m.what}`, m.sideBySide ?? `  model ${m.expected.slice(0, 200)}\n  RTL   ${m.actual.slice(0, 200)}`);
    const w = writeLine(m);
    if (w) lines.push(w);
  }
  if (r.firstViolation) lines.push(`first violation: ${r.firstViolation}`);
  lines.push(...r.evidence.map((f) => `pcap: ${f}`), ...(r.waveform ? [`waveform: ${r.waveform}`] : []));
  if (r.traces.length) lines.push(`traces: ${r.traces.join(' ')}`, `diff: rnic diff ${r.traces.join(' ')}`);
  if (m || r.firstViolation) lines.push(`replay: ${replay}`);
  return lines.join('\n');
}

export function formatRnicCosim(r: RnicCosimReport, replay: string): string {
  const codes = Object.keys(r.errorsHit).length;
  const lines = [
    `${r.module} (${r.qps} QPs) against the model: ${r.ops} operations, seed ${r.seed}, ${r.streams} connections`,
    `FPDUs compared: ${r.fpdusIn} in, ${r.fpdusOut} out (every one octet for octet); ${r.workRequests} work requests; ${r.events} completions; ${r.payloadBytes} tagged payload octets received`,
    `opcodes: ${counts(r.opcodes)}`,
    `error codes raised: ${codes} (${counts(r.errorsHit)})`,
    r.errorsMissed.length ? `error codes not raised: ${r.errorsMissed.join('; ')}` : 'every DDP/RDMAP/MPA error code of the spec was raised',
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e3).toFixed(0)} k cycles/s`,
    r.mismatches ? `FAIL: ${r.mismatches} differences from the model` : 'PASS: every FPDU, completion and memory octet equals the model',
    r.violations ? `FAIL: ${r.violations} protection violations` : 'protection: no write outside what the STag table and posted buffers allow',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: ${mismatchPlace(m)}: ${m.what}`);
    if (m.sideBySide) lines.push(m.sideBySide);
    else lines.push(`  model ${m.expected.slice(0, 200)}`, `  RTL   ${m.actual.slice(0, 200)}`);
    const w = writeLine(m);
    if (w) lines.push(w);
  }
  if (r.firstViolation) lines.push(`first violation: ${r.firstViolation}`);
  if (m || r.firstViolation) lines.push(...r.evidence.map((f) => `pcap: ${f}`));
  if (r.waveform) lines.push(`waveform: ${r.waveform}`);
  if (r.traces.length) lines.push(`traces: ${r.traces.join(' ')}`, `diff: rnic diff ${r.traces.join(' ')}`);
  if (m || r.firstViolation) lines.push(`replay: ${replay}`);
  return lines.join('\n');
}
