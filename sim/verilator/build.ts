/**
 * Builds a Verilated model into a Node addon, once per distinct input.
 *
 * The cache entry `<cacheDir>/<top>-<key16>/model.node` is keyed by a hash of everything that
 * can change the binary: source contents, flags, the port list, the wrapper generator version and
 * the tool versions. A build runs in a temporary sibling directory that is renamed into place in
 * one step, so parallel test processes never see half a build; if two processes build the same
 * key, the first rename wins and the loser uses the winner's directory.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseXmlPorts, portMismatches } from './module-ports';
import { validatePorts, type PortSpec } from './port-spec';
import { commandLine, runStep, toolchain, type Toolchain } from './toolchain';
import { SAMPLE_STROBE, sampledInputsModule, sampledTopName } from './sampled-inputs';
import { WRAPPER_VERSION, generateWrapper, type WrapperOptions } from './wrapper-gen';
import { cacheDir } from '../../hdl-gen/gen/paths';
import { RtlError, verilatorErrors } from '../../hdl-gen/gen/rtl-error';

export type Optimize = 'run' | 'build';

/** The waveform formats a model can be built to write. */
export type TraceFormat = 'vcd' | 'fst';

/** The format a waveform file's name asks for: `.fst` is FST, anything else VCD. */
export const traceFormatOf = (file: string): TraceFormat => (file.toLowerCase().endsWith('.fst') ? 'fst' : 'vcd');

export interface BuildOptions {
  readonly top: string;
  /** Absolute paths of the Verilog sources. */
  readonly sources: readonly string[];
  readonly ports: readonly PortSpec[];
  /** The 1-bit input `tick()` toggles; default 'clk'. */
  readonly clock?: string;
  /**
   * Compile in waveform support (SimModel.waveform): 'fst' (Verilator's --trace-fst, compressed,
   * what GTKWave and Surfer open fastest) or 'vcd' (true means 'vcd'). Costs some speed even while
   * no file is open.
   */
  readonly trace?: boolean | TraceFormat;
  /** Default: the cache's verilator/ (hdl-gen/gen/paths.ts: RNIC_CACHE_DIR, else `<repo>/.cache/verilator` in a checkout). */
  readonly cacheDir?: string;
  /** Appended to the Verilator command line (e.g. `-GDATA_WIDTH=128`). */
  readonly extraFlags?: readonly string[];
  /**
   * 'run' (default): the C++ optimised for a fast eval loop. 'build': compiled at -O0, for a model
   * that runs briefly (a test's mutant), where the compile is most of the time.
   */
  readonly optimize?: Optimize;
  /**
   * Put the top behind sampled-inputs.ts's shim, so the logic its inputs feed is evaluated once per
   * cycle, not twice (default true). The harness sees the same timing either way; off, the top's
   * own ports are the model's and the VCD has one level of hierarchy less.
   */
  readonly sampledInputs?: boolean;
  /** Where the port list comes from, for the error when the module's ports differ (e.g. a manifest.json). */
  readonly portsFrom?: string;
}

export interface CompiledModel {
  readonly top: string;
  /** Absolute path of the addon. */
  readonly path: string;
  /** The cache entry holding the addon, the generated wrapper and the Verilator output. */
  readonly dir: string;
  /** Hex sha256 build key. */
  readonly key: string;
  readonly ports: readonly PortSpec[];
  readonly clock: string;
  /** The waveform format it writes, or null when built without trace. */
  readonly trace: TraceFormat | null;
  /** True when an existing cache entry was reused. */
  readonly cached: boolean;
  readonly buildMs: number;
  readonly sampledInputs: boolean;
}

export const DEFAULT_CLOCK = 'clk';
export const MODEL_FILE = 'model.node';
export const WRAPPER_FILE = 'wrapper.cpp';
export const MANIFEST_FILE = 'manifest.json';
/** The shim's source inside a cache entry, when sampledInputs is on. */
export const SHIM_FILE = 'sampled_inputs.v';
/** Hex digits of the key in the directory name: 64 bits is plenty to avoid collisions. */
export const KEY_DIGITS = 16;
const CACHE_DIR_MODE = 0o755;
/** Parallel jobs for the C++ compiles inside one build. */
export const BUILD_JOBS = 2;

/** Where builds go unless BuildOptions.cacheDir says: read when a build is resolved, so RNIC_CACHE_DIR may change between builds. */
export const defaultCacheDir = (): string => cacheDir('verilator');

/**
 * Optimisation of the runtime library objects (verilated.o …), built by Verilator's makefile once
 * per toolchain (runtimeLibrary): OPT_GLOBAL covers them; the eval loop barely touches them.
 */
const MAKE_OPT = ['OPT_FAST=-O3', 'OPT_SLOW=-O1', 'OPT_GLOBAL=-O2'] as const;

/**
 * Verilator only writes the C++ (`--cc`); the build compiles it itself (compileFlags).
 * `-CFLAGS -fPIC` reaches the makefile, which builds the runtime objects linked into the addon.
 * `-fno-inline` keeps each module instance's logic in its own functions rather than flattening
 * the hierarchy into the top's: the eval loop of rnic_top (a datapath per QP) runs 1.07-1.18x
 * faster that way (scripts/idle-speed.ts, sim/verilator/README.md).
 */
function verilatorFlags(top: string, trace: TraceFormat | null, extra: readonly string[]): string[] {
  return [
    '--cc', '-O3', '-fno-inline', '-CFLAGS', '-fPIC',
    '--top-module', top, '-Wno-fatal',
    ...(trace === 'vcd' ? ['--trace'] : trace === 'fst' ? ['--trace-fst'] : []),
    ...extra,
  ];
}

/** The defines Verilator's makefile passes to the model; the wrapper must agree (same headers, same ODR). */
const modelDefines = (trace: TraceFormat | null): string[] => [
  '-DVM_COVERAGE=0', '-DVM_SC=0', `-DVM_TRACE=${trace ? 1 : 0}`, `-DVM_TRACE_FST=${trace === 'fst' ? 1 : 0}`, `-DVM_TRACE_VCD=${trace === 'vcd' ? 1 : 0}`,
];

/**
 * The flags of the one compile that makes the addon: the wrapper and every class file of the model
 * in one translation unit (UNIT_FILE). One unit because each unit first parses verilated.h and the
 * STL behind it, about a second of compiler time before any of its own code: rnic_top_w8 as 54
 * units (Verilator's parallel build) cost 71 s of compiler CPU, as one 12 s, with the eval loop as
 * fast; the wrapper in the same unit saves the second parse. 'run' compiles at -O3 (Verilator's
 * default -Os is markedly slower in the eval loop); 'build' (a test's mutant, which runs briefly)
 * at -O0, about 45% less compile CPU. `-fcf-protection=none` and the warnings are Verilator's own
 * makefile flags for its output.
 */
const compileFlags = (optimize: Optimize, trace: TraceFormat | null): string[] => [
  optimize === 'run' ? '-O3' : '-O0', ...hostIsaFlags(), '-fPIC', '-pthread', '-std=c++17', '-faligned-new', '-fcf-protection=none',
  '-Wno-bool-operation', '-Wno-sign-compare', '-Wno-uninitialized', '-Wno-unused-but-set-variable',
  '-Wno-unused-parameter', '-Wno-unused-variable', '-Wno-shadow', ...modelDefines(trace),
];

/**
 * Instruction-set flags the build machine allows beyond the x86-64 baseline. `-mpopcnt`: Verilator
 * computes every reduction XOR (`^(x & mask)`, the CRC's XOR trees) with __builtin_parity, one
 * POPCNT instead of a shift-and-XOR fold: `crc32c_w8` co-simulates about 15% faster. Only where the
 * CPU has the instruction (the flags are in the build's cache key, so a cache never serves a model
 * built for another CPU's flags).
 */
let isaFlags: string[] | undefined;
function hostIsaFlags(): string[] {
  if (isaFlags) return isaFlags;
  let popcnt = false;
  if (process.arch === 'x64') {
    try {
      popcnt = /^flags\s*:.*\bpopcnt\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
    } catch {
      popcnt = false; // no /proc (not Linux): the baseline
    }
  }
  isaFlags = popcnt ? ['-mpopcnt'] : [];
  return isaFlags;
}

/** The headers every unit starts with (the wrapper's), precompiled once per flags (precompiledHeader). */
const pchText = (trace: TraceFormat | null): string => [
  '// The headers every model unit starts with, precompiled (sim/verilator/build.ts, precompiledHeader).',
  '#include <node_api.h>',
  ...['cstddef', 'cstdint', 'cstring', 'memory', 'string', 'vector'].map((h) => `#include <${h}>`),
  '#include "verilated.h"',
  ...(trace === 'vcd' ? ['#include "verilated_vcd_c.h"'] : trace === 'fst' ? ['#include "verilated_fst_c.h"'] : []),
  '',
].join('\n');

/** The one translation unit: the wrapper, then the model's class files in the makefile's order. */
const UNIT_FILE = 'unit.cpp';
const PCH_FILE = 'model_headers.h';
/** Bump when the way a model is compiled changes (part of the key). */
const RECIPE = 'one unit with the wrapper, precompiled headers (2)';

interface Resolved {
  readonly top: string;
  readonly sources: readonly string[];
  readonly ports: readonly PortSpec[];
  readonly clock: string;
  readonly trace: TraceFormat | null;
  readonly cacheDir: string;
  readonly extraFlags: readonly string[];
  readonly optimize: Optimize;
  readonly sampledInputs: boolean;
  /** The module Verilator is given as its top: the shim around `top`, or `top` itself. */
  readonly verilatedTop: string;
  readonly portsFrom: string;
}

function resolve(opts: BuildOptions): Resolved {
  const clock = opts.clock ?? DEFAULT_CLOCK;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(opts.top)) throw new Error(`top module name ${JSON.stringify(opts.top)} is not a plain identifier`);
  if (opts.sources.length === 0) throw new Error(`buildModel(${opts.top}): no sources given`);
  for (const s of opts.sources) {
    if (!path.isAbsolute(s)) throw new Error(`source ${s} is not an absolute path`);
    if (!existsSync(s)) throw new Error(`source ${s} does not exist`);
  }
  validatePorts(opts.ports, clock);
  const sampledInputs = opts.sampledInputs ?? true;
  if (sampledInputs && opts.ports.some((p) => p.name === SAMPLE_STROBE)) {
    throw new Error(`buildModel(${opts.top}): port ${SAMPLE_STROBE} is the sampled-inputs shim's strobe; pass sampledInputs: false`);
  }
  return {
    top: opts.top,
    sources: opts.sources,
    ports: opts.ports.map((p) => ({ name: p.name, direction: p.direction, width: p.width })),
    clock,
    trace: opts.trace === true ? 'vcd' : opts.trace || null,
    cacheDir: opts.cacheDir ?? defaultCacheDir(),
    extraFlags: opts.extraFlags ?? [],
    optimize: opts.optimize ?? 'run',
    sampledInputs,
    verilatedTop: sampledInputs ? sampledTopName(opts.top) : opts.top,
    portsFrom: opts.portsFrom ?? 'the port list given to the build',
  };
}

/** A path relative to the working directory when that is shorter (messages name files as a user typed them). */
const shortPath = (text: string): string =>
  text.replace(/(\/[^\s:]+)/g, (p) => {
    const rel = path.relative(process.cwd(), p);
    return rel.length < p.length && !rel.startsWith('../..') ? rel : p;
  });

const wrapperOptions = (r: Resolved): WrapperOptions => ({
  top: r.top, ports: r.ports, clock: r.clock, trace: r.trace, ...(r.sampledInputs ? { sampled: { strobe: SAMPLE_STROBE, module: r.verilatedTop } } : {}),
});

/** The shim's text (sampled-inputs.ts), or undefined when the top is Verilated as it is. */
const shimText = (r: Resolved): string | undefined => (r.sampledInputs ? sampledInputsModule(r.top, r.ports, r.clock) : undefined);

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** The build key: everything that can change the addon, and nothing that cannot (no paths). */
export function buildKey(opts: BuildOptions, tools: Toolchain = toolchain()): string {
  const r = resolve(opts);
  const description = {
    top: r.top,
    clock: r.clock,
    sources: r.sources.map((s) => ({ name: path.basename(s), sha256: sha256(readFileSync(s)) })),
    verilatorFlags: verilatorFlags(r.verilatedTop, r.trace, r.extraFlags),
    recipe: RECIPE,
    optimize: r.optimize,
    shim: shimText(r) ?? null,
    makeFlags: MAKE_OPT,
    gxxFlags: compileFlags(r.optimize, r.trace),
    ports: r.ports,
    wrapperVersion: WRAPPER_VERSION,
    // The generated text too, so an edit to the generator that forgets the version bump still rebuilds.
    wrapper: sha256(generateWrapper(wrapperOptions(r))),
    verilator: tools.verilatorVersion,
    gxx: tools.gxxVersion,
    node: process.version,
    arch: process.arch,
  };
  return sha256(JSON.stringify(description));
}

/**
 * Moves a finished build into place atomically. If another process got there first its entry
 * is complete (it was renamed whole), so use it and drop ours.
 */
export function publish(tmpDir: string, finalDir: string): 'published' | 'lost-race' {
  try {
    renameSync(tmpDir, finalDir);
    return 'published';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && existsSync(path.join(finalDir, MODEL_FILE))) {
      rmSync(tmpDir, { recursive: true, force: true });
      return 'lost-race';
    }
    throw e;
  }
}

/** The names a Verilator `<prefix>_classes.mk` lists under the given variables, in its order. */
function classesList(objDir: string, prefix: string, variables: readonly string[]): string[] {
  const classes = readFileSync(path.join(objDir, `${prefix}_classes.mk`), 'utf8');
  const names: string[] = [];
  for (const v of variables) {
    for (const m of classes.matchAll(new RegExp(`^${v} \\+= \\\\\n((?:\t.*\\\\\n)*)`, 'gm'))) {
      for (const line of (m[1] ?? '').split('\n')) {
        const name = line.replace(/\\$/, '').trim();
        if (name) names.push(name);
      }
    }
  }
  return names;
}

/** The runtime-library objects Verilator's makefile would link into an executable (verilated.o …). */
function runtimeObjects(objDir: string, prefix: string): string[] {
  const names = classesList(objDir, prefix, ['VM_GLOBAL_FAST', 'VM_GLOBAL_SLOW']).map((n) => `${n}.o`);
  if (names.length === 0) throw new Error(`no runtime objects listed in ${prefix}_classes.mk: unexpected Verilator output`);
  return names;
}

/** The model's class files, fast and slow, in the makefile's order (what its `__ALL.cpp` would include). */
function modelClassFiles(objDir: string, prefix: string): string[] {
  const names = classesList(objDir, prefix, ['VM_CLASSES_FAST', 'VM_CLASSES_SLOW', 'VM_SUPPORT_FAST', 'VM_SUPPORT_SLOW']).map((n) => `${n}.cpp`);
  if (names.length === 0) throw new Error(`no class files listed in ${prefix}_classes.mk: unexpected Verilator output`);
  return names;
}

/**
 * A cache entry shared by every model built with the same tools and flags (`<cacheDir>/<kind>-<key16>/`
 * holding `files`): returned when whole; else `fill(tmp)` writes them into a temporary directory
 * renamed into place, under a lock, the way a model is published.
 */
function sharedEntry(cacheRoot: string, kind: string, key: string, files: readonly string[], fill: (tmp: string) => void): { dir: string; built: boolean } {
  const dir = path.join(cacheRoot, `${kind}-${key.slice(0, KEY_DIGITS)}`);
  const have = () => files.every((f) => existsSync(path.join(dir, f)));
  if (have()) return { dir, built: false };
  const lock = `${dir}.lock`;
  if (!takeLock(lock, have)) return { dir, built: false };
  try {
    if (have()) return { dir, built: false };
    const tmp = mkdtempSync(path.join(cacheRoot, `.tmp-${kind}-${key.slice(0, KEY_DIGITS)}-`));
    chmodSync(tmp, CACHE_DIR_MODE);
    try {
      fill(tmp);
      rmSync(dir, { recursive: true, force: true }); // a partial entry left by a killed process
      renameSync(tmp, dir);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return { dir, built: true };
}

/**
 * The runtime library objects (verilated.o …) for `names`. They include no model header (only
 * Verilator's and the system's), so one compile serves every model: about 10 s saved per build
 * here, most of a small block's build. On a miss `make(names)` compiles them in the model's obj
 * directory (its makefile has the flags) and they are copied into the shared entry.
 */
function runtimeLibrary(r: Resolved, tools: Toolchain, objDir: string, names: readonly string[], make: (names: readonly string[]) => void): { dir: string; objects: string[]; built: boolean } {
  const key = sha256(JSON.stringify({
    names: [...names].sort(), makeFlags: MAKE_OPT, defines: modelDefines(r.trace), verilator: tools.verilatorVersion, include: tools.verilatorInclude, gxx: tools.gxxVersion, arch: process.arch,
  }));
  const { dir, built } = sharedEntry(r.cacheDir, 'runtime', key, names, (tmp) => {
    make(names);
    for (const n of names) copyFileSync(path.join(objDir, n), path.join(tmp, n));
  });
  return { dir, objects: names.map((n) => path.join(dir, n)), built };
}

/** The include directories of every model compile. */
const includeFlags = (tools: Toolchain): string[] => [`-I${tools.nodeInclude}`, `-I${tools.verilatorInclude}`, `-I${path.join(tools.verilatorInclude, 'vltstd')}`];

/**
 * The wrapper's headers (node_api.h, the STL, verilated.h …) precompiled with exactly the flags of
 * the model compile (a GCC precompiled header is used only then): parsing them is about a second
 * of every build, most of a small block's. Returns the header to force-include (`-include`); GCC
 * takes the `.gch` beside it and falls back to the text if the flags ever differ.
 */
function precompiledHeader(r: Resolved, tools: Toolchain, compile: (args: string[], cwd: string) => void): { header: string; built: boolean } {
  const flags = compileFlags(r.optimize, r.trace);
  const text = pchText(r.trace);
  const key = sha256(JSON.stringify({ flags, text, include: includeFlags(tools), verilator: tools.verilatorVersion, gxx: tools.gxxVersion, node: process.version, arch: process.arch }));
  const { dir, built } = sharedEntry(r.cacheDir, 'pch', key, [PCH_FILE, `${PCH_FILE}.gch`], (tmp) => {
    writeFileSync(path.join(tmp, PCH_FILE), text);
    compile([...flags, ...includeFlags(tools), '-x', 'c++-header', PCH_FILE, '-o', `${PCH_FILE}.gch`], tmp);
  });
  return { header: path.join(dir, PCH_FILE), built };
}

/** Told before a model is built and after (a command line says so: a build takes seconds to minutes). */
export type BuildNotice = (event: { readonly top: string; readonly cacheDir: string; readonly doneMs?: number }) => void;
let buildNotice: BuildNotice | null = null;

/** Sets (or clears, with null) the function told when buildModel builds rather than reuses a model. */
export function onModelBuild(notice: BuildNotice | null): void {
  buildNotice = notice;
}

export function buildModel(opts: BuildOptions): CompiledModel {
  const started = performance.now();
  const r = resolve(opts);
  const tools = toolchain();
  const key = buildKey(opts, tools);
  const dir = path.join(r.cacheDir, `${r.top}-${key.slice(0, KEY_DIGITS)}`);
  const result = (cached: boolean): CompiledModel => ({
    top: r.top, path: path.join(dir, MODEL_FILE), dir, key, ports: r.ports, clock: r.clock, trace: r.trace,
    cached, buildMs: performance.now() - started, sampledInputs: r.sampledInputs,
  });
  if (existsSync(path.join(dir, MODEL_FILE))) return result(true);

  mkdirSync(r.cacheDir, { recursive: true });
  // One build per key at a time: test workers that need the same large model (minutes to build)
  // wait for the first instead of building it again beside it.
  const lock = `${dir}.lock`;
  if (!takeLock(lock, () => existsSync(path.join(dir, MODEL_FILE)))) return result(true);
  try {
    return buildLocked(r, tools, key, dir, result);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A build lock older than this is taken to be left by a killed process. */
const STALE_LOCK_MS = 30 * 60_000;

/** Takes `lock` (a directory), or waits until `done()` (false: another process built it). */
function takeLock(lock: string, done: () => boolean): boolean {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(lock);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (done()) return false;
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    } catch {
      // Released between the two calls: try again.
    }
    Atomics.wait(sleeper, 0, 0, 500);
  }
}

function buildLocked(r: Resolved, tools: ReturnType<typeof toolchain>, key: string, dir: string, result: (cached: boolean) => CompiledModel): CompiledModel {
  if (existsSync(path.join(dir, MODEL_FILE))) return result(true);
  buildNotice?.({ top: r.top, cacheDir: r.cacheDir });
  const tmp = mkdtempSync(path.join(r.cacheDir, `.tmp-${r.top}-${key.slice(0, KEY_DIGITS)}-`));
  chmodSync(tmp, CACHE_DIR_MODE); // mkdtemp makes it private; the published entry is an ordinary directory
  try {
    // Every step runs inside the entry with relative paths, so the recorded commands stay true
    // after the directory is renamed into place.
    const obj = 'obj';
    const prefix = `V${r.verilatedTop}`;
    const commands: string[] = [];
    const step = (name: string, cmd: string, args: string[]): void => {
      commands.push(commandLine(cmd, args));
      runStep(`${name} (${r.top})`, cmd, args, tmp, path.join(tmp, `${name}.log`));
    };

    /** A Verilator step that fails on the sources is an RtlError naming their files and lines. */
    const verilate = (name: string, args: string[]): void => {
      try {
        step(name, 'verilator', args);
      } catch (e) {
        const errors = verilatorErrors(readFileSync(path.join(tmp, `${name}.log`), 'utf8'));
        if (errors.length === 0) throw e;
        throw new RtlError('verilog', `Verilator rejects the Verilog of ${r.top}:\n  ${errors.map(shortPath).join('\n  ')}`);
      }
    };
    // The ports as Verilator reads the top, checked against the list before anything is built.
    verilate('ports', ['--xml-only', '--top-module', r.top, '-Wno-fatal', '--Mdir', 'xml', ...r.sources]);
    const problems = portMismatches(r.ports, parseXmlPorts(readFileSync(path.join(tmp, 'xml', `V${r.top}.xml`), 'utf8'), r.top));
    if (problems.length > 0) {
      const file = r.sources.find((f) => new RegExp(`^\\s*module\\s+${r.top}\\b`, 'm').test(readFileSync(f, 'utf8'))) ?? r.sources[r.sources.length - 1]!;
      throw new RtlError('ports', `${shortPath(file)}: the ports of module ${r.top} differ from ${r.portsFrom}:\n  ${problems.join('\n  ')}`);
    }
    rmSync(path.join(tmp, 'xml'), { recursive: true, force: true }); // megabytes for a large top

    const shim = shimText(r);
    if (shim !== undefined) writeFileSync(path.join(tmp, SHIM_FILE), shim);
    verilate('verilator', [...verilatorFlags(r.verilatedTop, r.trace, r.extraFlags), '--Mdir', obj, ...r.sources, ...(shim !== undefined ? [SHIM_FILE] : [])]);

    // Verilator 5.006 builds the runtime library objects for executables only, so ask its makefile
    // for them, once for every model that needs the same ones (runtimeLibrary).
    const runtime = runtimeLibrary(r, tools, path.join(tmp, obj), runtimeObjects(path.join(tmp, obj), prefix), (names) =>
      step('runtime', 'make', ['-C', obj, '-f', `${prefix}.mk`, '-j', String(BUILD_JOBS), ...MAKE_OPT, ...names]));
    commands.push(`# runtime objects from ${runtime.dir}${runtime.built ? ' (built by this build)' : ''}`);
    const pch = precompiledHeader(r, tools, (args, cwd) => runStep(`precompiled headers (${r.top})`, 'g++', args, cwd, path.join(cwd, 'pch.log')));
    commands.push(`# precompiled headers ${pch.header}.gch${pch.built ? ' (built by this build)' : ''}`);

    writeFileSync(path.join(tmp, WRAPPER_FILE), generateWrapper(wrapperOptions(r)));
    writeFileSync(path.join(tmp, UNIT_FILE), [
      '// The addon as one translation unit: the wrapper, then every class file of the model (sim/verilator/build.ts).',
      `#include "${WRAPPER_FILE}"`,
      ...modelClassFiles(path.join(tmp, obj), prefix).map((f) => `#include "${obj}/${f}"`),
      '',
    ].join('\n'));
    step('compile', 'g++', [
      ...compileFlags(r.optimize, r.trace), '-shared', '-include', pch.header,
      ...includeFlags(tools), `-I${obj}`,
      UNIT_FILE, ...runtime.objects,
      // The FST writer compresses with zlib.
      ...(r.trace === 'fst' ? ['-lz'] : []), '-o', MODEL_FILE,
    ]);

    writeFileSync(path.join(tmp, MANIFEST_FILE), `${JSON.stringify({ key, top: r.top, verilatedTop: r.verilatedTop, sources: r.sources, ports: r.ports, clock: r.clock, trace: r.trace, commands, tools }, null, 2)}\n`);
    publish(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const built = result(false);
  buildNotice?.({ top: r.top, cacheDir: r.cacheDir, doneMs: built.buildMs });
  // RNIC_BUILD_LOG=F: one JSON line per model built (not reused), to see where a test run's build time goes.
  const log = process.env.RNIC_BUILD_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ top: r.top, key: key.slice(0, KEY_DIGITS), ms: Math.round(built.buildMs), optimize: r.optimize, trace: r.trace, pid: process.pid, from: callerFile() })}\n`);
  return built;
}

/** The test or script file that asked for a build (the build log's `from`), or null. */
function callerFile(): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 100;
  const frames = new Error().stack?.split('\n') ?? [];
  Error.stackTraceLimit = limit;
  for (const f of frames) {
    const m = /((?:test|scripts|bench)\/[\w./-]+\.(?:test\.)?[mc]?ts)/.exec(f);
    if (m) return m[1]!;
  }
  return process.argv.slice(1, 4).map((a) => path.basename(a)).join(' ');
}
