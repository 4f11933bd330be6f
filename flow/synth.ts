import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cacheKey, defaultCacheRoot, readCachedResult, workDirFor, writeCachedResult } from './cache';
import { DEFAULT_ICE40_DEVICE, deviceLabel, type Ice40DeviceName } from './ice40-devices';
import { nextpnrVersion, type Utilisation } from './nextpnr';
import { placeWrapped } from './ooc-pnr';
import { FlowError } from './run-tool';
import { TARGET_PROFILES, classifyCells, type SynthTarget } from './targets';
import { QUASI_STATIC, netlistDepth, readModule, type YosysModule } from './depth';
import { BRAM_BOXES_FILE, bramBoxes, xilinxCellLibrary } from './xilinx-bram';
import { abc9Delay, abc9Target, xilinxArcs, type DelayPath } from './abc9-delay';
import { YOSYS, ltpFoundLoop, parseLtp, parseStatJson, runYosys, synthScript, yosysVersion } from './yosys';

/**
 * `synthesize`: one module, one target, one result: cell counts from yosys, logic depth from
 * yosys's `ltp`, and for iCE40 an Fmax from nextpnr on the module inside its out-of-context
 * wrapper. Results are cached by content (see cache.ts); what each number means is in
 * flow/README.md.
 */

export type { SynthTarget } from './targets';

export interface SynthOptions {
  top: string;
  /** Plain Verilog-2005 files, read in this order. */
  sources: readonly string[];
  target: SynthTarget;
  /** The module's clock port (default `clk`). */
  clock?: string;
  /** The module's reset port, driven from a register in the iCE40 wrapper (default `rst`). */
  reset?: string;
  /** iCE40 part (default hx8k, package ct256). */
  device?: Ice40DeviceName;
  /** Where work directories live (default: the cache's synth/, `<repo>/.cache/synth` in a checkout). */
  cacheRoot?: string;
  /** Run the tools even when a cached result exists. */
  fresh?: boolean;
}

export interface SynthResult {
  target: SynthTarget;
  top: string;
  /** All cells of the flattened, mapped module. */
  cells?: number;
  cellTypes?: Record<string, number>;
  /** iCE40: SB_LUT4. Xilinx: LUT1..LUT6 and INV. */
  luts?: number;
  /** Flip-flops of every variant (SB_DFF*, FD[RSCP]E, `$_DFF*`/`$_SDFF*`/…). */
  ffs?: number;
  /** iCE40: SB_CARRY. Xilinx: CARRY4/CARRY8 (each covers 4/8 bits). */
  carries?: number;
  /** Block RAM cells. iCE40: SB_RAM40_4K* (4 kbit each). Xilinx: RAMB18E1 + RAMB36E1 cells. */
  rams?: number;
  /** Xilinx only: distributed-RAM cells (RAM32M, RAM64X1D, …; not in `luts`). */
  lutRams?: number;
  /** Cells on the longest combinational path (yosys `ltp`), in the target's own cells. */
  logicDepth?: number;
  /**
   * xilinx and ice40: the longest register-to-register path in LUT levels (carry and wide-mux
   * cells weigh 0), its all-cell depth, and where it starts and ends (flow/depth.ts; configuration
   * inputs excluded as start points).
   */
  lutLevels?: number;
  allCellDepth?: number;
  criticalPath?: { start: string; end: string; cells: Record<string, number> } | null;
  /**
   * xilinx: the delay abc9 mapped for (its `Del`, ps, from the log) and the slowest path in its
   * timing model, estimated on the netlist (flow/abc9-delay.ts): abc9 lets every other path take
   * up to that delay, so this path, not the one with the most LUT levels, is the one to shorten.
   */
  abc9?: { targetPs: number | null; slowest: DelayPath | null };
  /** iCE40 only: nextpnr's routed Fmax of the wrapped module; null when not placed. */
  fmaxMHz?: number | null;
  /** iCE40 only: whether the wrapped module placed and routed on `device`. */
  fits?: boolean;
  device?: string;
  /** iCE40 only: nextpnr's utilisation of the wrapped design (bel type → used/total). */
  utilisation?: Record<string, Utilisation>;
  /** iCE40 only: flip-flops the out-of-context wrapper adds around the module. */
  wrapperRegisters?: number;
  notes: string[];
  /** The work directory: scripts, logs, netlists, `result.json`. */
  logDir: string;
  /** Wall-clock seconds of the run that produced the result (not of a cache hit). */
  seconds: number;
  /** True when the result came from the cache. */
  cached?: boolean;
}

const DEFAULT_CLOCK = 'clk';
const DEFAULT_RESET = 'rst';
const XILINX_FAMILY = 'xc7';
const MS_PER_SECOND = 1000;

/** The module's own outputs, relative to the work directory. */
const MODULE_OUTPUTS = Object.freeze({ statJson: 'stat.json', ltpText: 'ltp.txt', netlistJson: 'netlist.json' });

/** Simple Verilog identifiers only: the name goes into yosys commands and a directory name. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;

let versions: Record<string, string> | undefined;

/** Tool versions, asked once per process (they are part of the cache key). */
function toolVersions(target: SynthTarget): Record<string, string> {
  versions ??= { yosys: yosysVersion() };
  if (target === 'ice40' && versions.nextpnr === undefined) versions.nextpnr = nextpnrVersion();
  return target === 'ice40' ? { ...versions } : { yosys: versions.yosys! };
}

function checkOptions(o: SynthOptions): void {
  if (!IDENTIFIER.test(o.top)) throw new FlowError(`top module name '${o.top}' is not a simple Verilog identifier`);
  if (!(o.target in TARGET_PROFILES)) throw new FlowError(`unknown target '${o.target}' (ice40, generic or xilinx)`);
  if (o.sources.length === 0) throw new FlowError(`no Verilog sources given for '${o.top}'`);
  const missing = o.sources.filter((s) => !existsSync(s));
  if (missing.length > 0) throw new FlowError(`Verilog source not found: ${missing.join(', ')}`);
}

/** The counts a target reports (generic has only flip-flops; its gates are not LUTs). */
function cellClasses(target: SynthTarget, cellTypes: Readonly<Record<string, number>>): Partial<SynthResult> {
  const { luts, ffs, carries, rams, lutRams } = classifyCells(TARGET_PROFILES[target], cellTypes);
  switch (target) {
    case 'generic':
      return { ffs };
    case 'ice40':
      return { luts, ffs, carries, rams };
    case 'xilinx':
      return { luts, ffs, carries, rams, lutRams };
  }
}

/** The mapped module of a work directory's netlist (read once: the top's is about 150 MB). */
function mappedModule(workDir: string, top: string): YosysModule | null {
  const netlist = join(workDir, MODULE_OUTPUTS.netlistJson);
  return existsSync(netlist) ? readModule(readFileSync(netlist, 'utf8'), top) : null;
}

/** abc9's delay target from the log and the slowest path of the mapped module in its model. */
function abc9Report(workDir: string, mapped: YosysModule | null): NonNullable<SynthResult['abc9']> {
  const log = join(workDir, 'yosys.log');
  return {
    targetPs: existsSync(log) ? abc9Target(readFileSync(log, 'utf8')) : null,
    slowest: mapped ? abc9Delay(mapped, xilinxArcs(xilinxCellLibrary(YOSYS)), QUASI_STATIC) : null,
  };
}

export function synthesize(opts: SynthOptions): SynthResult {
  checkOptions(opts);
  const sources = opts.sources.map((s) => resolve(s));
  const clock = opts.clock ?? DEFAULT_CLOCK;
  const reset = opts.reset ?? DEFAULT_RESET;
  const device = opts.device ?? DEFAULT_ICE40_DEVICE;
  const keyOptions = { top: opts.top, target: opts.target, clock, reset, ...(opts.target === 'ice40' ? { device } : {}) };
  const key = cacheKey({ target: opts.target, sources, options: keyOptions, tools: toolVersions(opts.target) });
  const workDir = workDirFor(opts.cacheRoot ?? defaultCacheRoot(), opts.top, key);
  if (!opts.fresh) {
    const hit = readCachedResult<SynthResult>(workDir);
    // The class counts derive from the cached cell table: a result cached before a count (rams)
    // existed gets it too.
    if (hit) {
      // A result cached before a report existed gets it from the files beside it.
      const abc9 = opts.target === 'xilinx' && !hit.abc9 ? { abc9: abc9Report(workDir, mappedModule(workDir, opts.top)) } : {};
      return { ...hit, ...cellClasses(opts.target, hit.cellTypes ?? {}), ...abc9, logDir: workDir, cached: true };
    }
  }
  mkdirSync(workDir, { recursive: true });

  const started = performance.now();
  if (opts.target === 'xilinx') writeFileSync(join(workDir, BRAM_BOXES_FILE), bramBoxes(YOSYS));
  const script = synthScript({ top: opts.top, sources, target: opts.target, outputs: MODULE_OUTPUTS, depth: true });
  runYosys(script, workDir, 'yosys', opts.top, sources);
  const { cells, cellTypes } = parseStatJson(readFileSync(join(workDir, MODULE_OUTPUTS.statJson), 'utf8'), opts.top);
  const counts = cellClasses(opts.target, cellTypes);
  const ltp = readFileSync(join(workDir, MODULE_OUTPUTS.ltpText), 'utf8');
  const logicDepth = parseLtp(ltp);
  const notes: string[] = [];
  const mapped = opts.target === 'generic' ? null : readModule(readFileSync(join(workDir, MODULE_OUTPUTS.netlistJson), 'utf8'), opts.top);
  const depth = mapped ? netlistDepth(mapped) : null;
  const levels = depth ? { lutLevels: depth.lutLevels, allCellDepth: depth.allCells, criticalPath: depth.critical } : {};
  if (ltpFoundLoop(ltp)) notes.push('combinational loop in the netlist: logic depth is a lower bound');

  let result: SynthResult;
  switch (opts.target) {
    case 'generic':
      result = { target: 'generic', top: opts.top, cells, cellTypes, ...counts, logicDepth, notes, logDir: workDir, seconds: 0 };
      notes.push("generic: yosys's internal gates; logic depth counts gates ($_AND_, $_XOR_, $_MUX_, …)");
      break;
    case 'xilinx':
      result = { target: 'xilinx', top: opts.top, device: XILINX_FAMILY, cells, cellTypes, ...counts, logicDepth, ...levels, abc9: abc9Report(workDir, mapped), notes, logDir: workDir, seconds: 0 };
      notes.push(
        'xilinx: 7-series cells, abc9, without IO buffers (-noiopad -noclkbuf); logic depth counts LUT/INV/CARRY/MUXF cells, a CARRY4 as one; LUT levels count LUTs only (../shared/design/microarchitecture.md); no Fmax without vendor place-and-route',
      );
      break;
    case 'ice40': {
      notes.push('ice40: logic depth counts SB_LUT4 and SB_CARRY cells (one per bit of a carry chain)');
      const pnr = placeWrapped({ top: opts.top, workDir, moduleNetlist: MODULE_OUTPUTS.netlistJson, clock, reset, device });
      notes.push(...pnr.notes);
      result = {
        target: 'ice40',
        top: opts.top,
        device: deviceLabel(device),
        cells,
        cellTypes,
        ...counts,
        logicDepth,
        ...levels,
        fmaxMHz: pnr.fmaxMHz,
        ...(pnr.fits === undefined ? {} : { fits: pnr.fits }),
        utilisation: pnr.utilisation,
        wrapperRegisters: pnr.wrapperRegisters,
        notes,
        logDir: workDir,
        seconds: 0,
      };
      break;
    }
  }
  result.seconds = Math.round(performance.now() - started) / MS_PER_SECOND;
  writeCachedResult(workDir, result);
  return result;
}
