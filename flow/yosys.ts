import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { FlowError, errorLines, logTail, runTool, toolVersion, type ToolRun } from './run-tool';
import { TARGET_PROFILES, type SynthTarget } from './targets';

/**
 * yosys: the synthesis scripts this flow runs, running them with a log in the work directory,
 * and reading back what they measured (`stat -json` for cells, `ltp` for logic depth).
 */

export const YOSYS = process.env.YOSYS ?? 'yosys';

export function yosysVersion(): string {
  return toolVersion(YOSYS, '-V');
}

/** Output files of a synthesis script, relative to the work directory. */
export interface SynthOutputs {
  statJson: string;
  ltpText: string;
  netlistJson: string;
}

export interface SynthScriptOptions {
  top: string;
  sources: readonly string[];
  target: SynthTarget;
  outputs: SynthOutputs;
  /** Measure logic depth with `ltp` (skipped for wrapped designs, where it would be the wrapper's). */
  depth: boolean;
}

/** A path as one yosys command argument. yosys has no escape for `"`, so such paths are refused. */
export function yosysPath(path: string): string {
  if (/["\n]/.test(path)) throw new FlowError(`yosys cannot read a path containing '"' or a newline: ${JSON.stringify(path)}`);
  return /[\s;#]/.test(path) ? `"${path}"` : path;
}

/**
 * The script, one command a line. Sources are plain Verilog-2005 (`read_verilog` without -sv).
 * `hierarchy -check` first, so a missing top or a missing submodule stops the run before synthesis;
 * every target's synthesis command flattens, so `stat -top` totals and `ltp` (which only looks
 * inside one module) both see the whole design.
 */
export function synthScript(o: SynthScriptOptions): string {
  const profile = TARGET_PROFILES[o.target];
  const lines = [
    `read_verilog ${o.sources.map(yosysPath).join(' ')}`,
    `hierarchy -check -top ${o.top}`,
    profile.synthCommand(o.top),
    `tee -o ${o.outputs.statJson} stat -width -json -top ${o.top}`,
    ...(o.depth ? [`tee -o ${o.outputs.ltpText} ltp -noff ${profile.depthSelection}`.trimEnd()] : []),
    `write_json ${o.outputs.netlistJson}`,
  ];
  return lines.join('\n') + '\n';
}

export interface WrappedScriptOptions {
  /** The module's own mapped, flattened netlist (`write_json` of the synthesis script). */
  moduleNetlist: string;
  /** The wrapper's Verilog; it instantiates the module. */
  wrapper: string;
  wrapperTop: string;
  outputs: Omit<SynthOutputs, 'ltpText'>;
}

/**
 * iCE40: the wrapper around the module's already mapped netlist, so the module is synthesised
 * once and the netlist placed is the one counted. `write_json` kept the cell library as boxes
 * without parameters; they are deleted and the library read again (synth_ice40 reads it once
 * more, replacing the boxes). The module's SB_* cells are instances synth_ice40 leaves alone: it
 * maps the wrapper's registers and XOR tree, and flattens.
 */
export function wrappedScript(o: WrappedScriptOptions): string {
  const lines = [
    `read_json ${yosysPath(o.moduleNetlist)}`,
    'delete =A:blackbox',
    'read_verilog -lib +/ice40/cells_sim.v',
    `read_verilog ${yosysPath(o.wrapper)}`,
    `hierarchy -check -top ${o.wrapperTop}`,
    TARGET_PROFILES.ice40.synthCommand(o.wrapperTop),
    `tee -o ${o.outputs.statJson} stat -width -json -top ${o.wrapperTop}`,
    `write_json ${o.outputs.netlistJson}`,
  ];
  return lines.join('\n') + '\n';
}

/**
 * Runs `script` as `<name>.ys` in `workDir` with its log in `<name>.log`. A failure throws a
 * `FlowError` with the log tail; a top module yosys cannot find gets a message naming it.
 */
export function runYosys(script: string, workDir: string, name: string, top: string, sources: readonly string[]): ToolRun {
  const scriptFile = `${name}.ys`;
  writeFileSync(join(workDir, scriptFile), script);
  const run = runTool(YOSYS, ['-s', scriptFile], workDir, join(workDir, `${name}.log`));
  if (run.status === 0) return run;
  const errors = errorLines(run.log);
  const files = sources.map((s) => basename(s)).join(', ');
  if (errors.some((e) => e.includes(`Module \`${top}' not found`) || e.includes(`Module \`\\${top}' not found`))) {
    throw new FlowError(`top module '${top}' not found in ${files}`, run.logFile, logTail(run.log));
  }
  throw new FlowError(`yosys failed on ${files}: ${errors[0] ?? `exit status ${run.status}`}`, run.logFile, logTail(run.log));
}

export interface CellStats {
  cells: number;
  cellTypes: Record<string, number>;
}

interface StatModule {
  num_cells: number;
  num_cells_by_type: Record<string, number>;
}

/**
 * Reads `stat -json -top T`: its "design" entry is the whole hierarchy under T (after flattening,
 * T alone). Without a top yosys omits "design", so the module `\T` is the fallback.
 */
export function parseStatJson(text: string, top: string): CellStats {
  const stat = JSON.parse(text) as { design?: StatModule; modules?: Record<string, StatModule> };
  const m = stat.design ?? stat.modules?.[`\\${top}`];
  if (m === undefined) throw new FlowError(`yosys stat has no entry for module '${top}'`);
  return { cells: m.num_cells, cellTypes: { ...m.num_cells_by_type } };
}

/**
 * The length of `ltp`'s longest path: the number of selected (combinational) cells on it.
 * A design with no combinational cells has depth 0; a missing report is `undefined`.
 */
export function parseLtp(text: string): number | undefined {
  const lengths = [...text.matchAll(/Longest topological path in \S+ \(length=(-?\d+)\)/g)].map((m) => Number(m[1]));
  if (lengths.length === 0) return undefined;
  return Math.max(0, ...lengths);
}

/** `ltp` warns once per bit on a combinational loop; depth is then a lower bound. */
export function ltpFoundLoop(text: string): boolean {
  return text.includes('Detected loop');
}
