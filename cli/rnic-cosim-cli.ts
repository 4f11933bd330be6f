import { join } from 'node:path';
import { DATAPATH_WIDTHS } from '../hdl-gen/gen/config';
import { cosimRnic, type RnicCosimResult } from '../sim/cosim/rnic';
import { cosimScenario, type ScenarioCosimResult } from '../sim/cosim/rnic-scenario';
import { loadConfig } from './gen-cli';
import { mismatchPlace, writeLine } from '../sim/cosim/scoreboard';
import { replayCommand } from './replay';
import { UsageError, loadScenario } from './scenario-cli';

/**
 * `rnic cosim` (`--dut rnic`, the default): the whole datapath rnic_top_w<W> against the model on
 * a random workload from a seed. On a mismatch the evidence goes to `--out` (default out/cosim):
 * the pcaps of the first mismatching QP as the RTL and as the model sent it, and a VCD of the same
 * run replayed from its seed (unless `--trace` already made one).
 */
export interface RnicCosimArgs {
  readonly seed: number;
  readonly ops: number;
  readonly faults: number;
  /** Default: the configuration's width. */
  readonly width?: number;
  readonly config?: string;
  readonly rtl?: string;
  readonly trace?: boolean;
  readonly out: string;
  readonly progress?: (done: number, total: number) => void;
  readonly plusargs?: readonly string[];
  /** On a failure: pcaps of the first failing QP and a traced replay (default true). */
  readonly evidence?: boolean;
}

export interface RnicCosimReport extends RnicCosimResult {
  readonly vcd: string | null;
  readonly replay: string;
}

export function runRnicCosim(a: RnicCosimArgs): RnicCosimReport {
  const config = loadConfig(a.config);
  const width = a.width ?? config.width;
  if (!(DATAPATH_WIDTHS as readonly number[]).includes(width)) throw new UsageError(`--width must be one of ${DATAPATH_WIDTHS.join(', ')} for rnic, got ${a.width}`);
  if (!Number.isInteger(a.ops) || a.ops < 1) throw new UsageError(`--ops must be a positive integer, got ${a.ops}`);
  if (!Number.isInteger(a.seed) || a.seed < 0 || a.seed > 0xffffffff) throw new UsageError(`--seed must be a 32-bit unsigned integer, got ${a.seed}`);
  if (!(a.faults >= 0 && a.faults <= 1)) throw new UsageError(`--faults must be a probability from 0 to 1, got ${a.faults}`);
  const vcdFile = join(a.out, `rnic_top_w${width}-seed${a.seed}.vcd`);
  const base = {
    width,
    seed: a.seed,
    ops: a.ops,
    faults: a.faults,
    config: { ...config, width: width as typeof config.width },
    ...(a.rtl !== undefined && { rtlDir: a.rtl }),
    ...(a.plusargs && { plusargs: a.plusargs }),
  };
  const evidence = a.evidence ?? true;
  const res: RnicCosimResult = cosimRnic({ ...base, ...(evidence && { evidenceDir: a.out }), ...(a.trace && { vcd: vcdFile }), ...(a.progress && { onProgress: a.progress }) });
  let vcd = a.trace ? vcdFile : null;
  if (evidence && !a.trace && (res.mismatches || res.violations)) {
    // The run is deterministic: the same seed again, traced, up to the first failure.
    cosimRnic({ ...base, ops: res.ops, vcd: vcdFile });
    vcd = vcdFile;
  }
  const replay = replayCommand({ dut: 'rnic', width, seed: a.seed, ops: a.ops, faults: a.faults, ...(a.config && { config: a.config }), ...(a.rtl && { rtl: a.rtl }), ...(a.plusargs && { plusargs: a.plusargs }), trace: ['--trace'] });
  return { ...res, vcd, replay };
}

const counts = (o: Readonly<Record<string, number>>): string => Object.entries(o).map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';

/** `rnic cosim --scenario F`: the scenario with the RTL as its responder (sim/cosim/rnic-scenario.ts). */
export type ScenarioCosimReport = ScenarioCosimResult & { readonly vcd: string | null; readonly replay: string };

export function runScenarioCosim(a: {
  scenario: string;
  seed: number;
  width?: number;
  config?: string;
  rtl?: string;
  trace?: boolean;
  out: string;
  plusargs?: readonly string[];
  evidence?: boolean;
}): ScenarioCosimReport {
  const config = loadConfig(a.config);
  const width = a.width ?? config.width;
  if (!(DATAPATH_WIDTHS as readonly number[]).includes(width)) throw new UsageError(`--width must be one of ${DATAPATH_WIDTHS.join(', ')} for rnic, got ${a.width}`);
  const s = loadScenario(a.scenario);
  const vcd = a.trace ? join(a.out, `rnic_top_w${width}-scenario.vcd`) : null;
  try {
    const replay = replayCommand({ dut: 'rnic', scenario: a.scenario, width, seed: a.seed, ...(a.config && { config: a.config }), ...(a.rtl && { rtl: a.rtl }), ...(a.plusargs && { plusargs: a.plusargs }), trace: ['--trace'] });
    const run = cosimScenario(s, {
      width,
      seed: a.seed,
      config: { ...config, width: width as typeof config.width },
      ...(a.evidence !== false && { evidenceDir: a.out }),
      ...(a.rtl !== undefined && { rtlDir: a.rtl }),
      ...(vcd && { vcd }),
      ...(a.plusargs && { plusargs: a.plusargs }),
    });
    return { ...run, vcd, replay };
  } catch (e) {
    const msg = (e as Error).message;
    if (/cannot run on the RTL/.test(msg)) throw new UsageError(msg);
    throw e;
  }
}

export function formatScenarioCosim(r: ScenarioCosimReport): string {
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
  lines.push(...r.evidence.map((f) => `pcap: ${f}`), ...(r.vcd ? [`vcd: ${r.vcd}`] : []));
  if (m || r.firstViolation) lines.push(`replay: ${r.replay}`);
  return lines.join('\n');
}

export function formatRnicCosim(r: RnicCosimReport): string {
  const codes = Object.keys(r.errorsHit).length;
  const lines = [
    `${r.module} (${r.qps} QPs) against the model: ${r.ops} operations, seed ${r.seed}, ${r.streams} connections`,
    `FPDUs compared: ${r.fpdusIn} in, ${r.fpdusOut} out (every one octet for octet); ${r.workRequests} work requests; ${r.events} completions; ${r.payloadBytes} tagged payload octets received`,
    `opcodes: ${counts(r.opcodes)}`,
    `error codes raised: ${codes} (${counts(r.errorsHit)})`,
    r.errorsMissed.length ? `error codes not raised: ${r.errorsMissed.join('; ')}` : 'every DDP/RDMAP/MPA error code of the spec was raised',
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e3).toFixed(0)} k cycles/s`,
    r.mismatches ? `FAIL: ${r.mismatches} differences from the model` : 'PASS: every FPDU, completion and memory octet equals the model',
    r.violations ? `FAIL: ${r.violations} protection violations` : 'protection: no write outside what the STag tables and posted buffers allow',
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
  if (m || r.firstViolation) {
    lines.push(...r.evidence.map((f) => `pcap: ${f}`));
    if (r.vcd) lines.push(`vcd: ${r.vcd}`);
    lines.push(`replay: ${r.replay}`);
  }
  return lines.join('\n');
}

/** A one-line progress bar for a TTY (stderr), redrawn in place. */
export function progressBar(write: (s: string) => void): (done: number, total: number) => void {
  let last = -1;
  return (done, total) => {
    const pct = Math.floor((100 * done) / total);
    if (pct === last && done !== total) return;
    last = pct;
    const filled = Math.round((30 * done) / total);
    write(`\r[${'#'.repeat(filled)}${' '.repeat(30 - filled)}] ${done}/${total} operations${done === total ? '\n' : ''}`);
  };
}
