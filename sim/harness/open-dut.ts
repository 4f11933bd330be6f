import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RnicConfig } from '../../hdl-gen/gen/config';
import { cacheDir } from '../../hdl-gen/gen/paths';
import { moduleSources, type ModuleSources } from '../../hdl-gen/gen/sources';
import { buildModel, traceFormatOf, type CompiledModel, type Optimize } from '../verilator/build';
import { SimModel, type TraceWindow } from '../verilator/model';
import { groupOf, schematize, testMutantPlusarg } from './mutant-schemata';

export interface DutOptions {
  /** The user's Verilog (a directory with rnic.f, as `rnic gen` writes) instead of the generated. */
  readonly rtlDir?: string;
  /** Build the traced variant and dump a waveform here: FST when the name ends in .fst, else VCD. */
  readonly vcd?: string;
  /** The cycles the waveform holds (default all). */
  readonly traceWindow?: TraceWindow;
  /**
   * Edits the module's own Verilog file (not those of the modules it instantiates) before it is
   * built: for tests that show the checks catch a broken RTL. The edited files go through the same
   * path as a user's --rtl directory.
   */
  readonly mutate?: (verilog: string) => string;
  /** The module whose file `mutate` edits (default: the DUT itself), e.g. a block inside a top. */
  readonly mutateModule?: string;
  /** The generator configuration (QPs, STag depth) the module is generated with. */
  readonly config?: RnicConfig;
  /** Verilate behind the sampled-inputs shim (default true; sim/verilator/sampled-inputs.ts). */
  readonly sampledInputs?: boolean;
  /** Appended to the Verilator command line (scripts/idle-speed.ts compares build variants). */
  readonly extraFlags?: readonly string[];
  /** The simulator's plusargs ("+NAME=value"), e.g. which mutant of a mutation campaign is live. */
  readonly plusargs?: readonly string[];
  /** The C++ optimised for the run or for the build (sim/verilator/build.ts); default 'build' for a `mutate`d DUT, which runs briefly. */
  readonly optimize?: Optimize;
}

/** The options of a co-simulation that choose and open its DUT: every harness takes them. */
export type DutSelection = Pick<DutOptions, 'rtlDir' | 'vcd' | 'traceWindow' | 'mutate' | 'mutateModule' | 'plusargs' | 'optimize'>;

/** The DutOptions of a harness's options: those given, and nothing else. */
export function dutSelection(o: DutSelection): DutOptions {
  return {
    ...(o.rtlDir !== undefined && { rtlDir: o.rtlDir }),
    ...(o.vcd !== undefined && { vcd: o.vcd }),
    ...(o.traceWindow && { traceWindow: o.traceWindow }),
    ...(o.mutate && { mutate: o.mutate }),
    ...(o.mutateModule !== undefined && { mutateModule: o.mutateModule }),
    ...(o.plusargs && { plusargs: o.plusargs }),
    ...(o.optimize && { optimize: o.optimize }),
  };
}

/**
 * A generated block (or the user's Verilog of it in `rtlDir`) built by Verilator and opened:
 * the first step of every co-simulation.
 */
export function openDut(module: string, opts: DutOptions = {}): { src: ModuleSources; compiled: CompiledModel; model: SimModel } {
  // A mutant of a group (sim/harness/mutant-schemata.ts) opens the group's one schemata build with
  // itself live, when its edit can be selected there; else its own build, as any other mutant.
  const { mutate, plusargs } = opts;
  const grouped = mutate && groupOf(mutate);
  if (grouped) {
    const { group, index } = grouped;
    const target = opts.mutateModule ?? module;
    let live = false;
    const schemata = (verilog: string): string => {
      // A member that throws or leaves this text alone (it edits another module) is just not in it.
      const s = schematize(verilog, group.map((f) => { try { return f(verilog); } catch { return verilog; } }), target);
      live = s.live[index] ?? false;
      return s.text;
    };
    const dir = mutatedDir(module, schemata, opts.rtlDir, target, opts.config);
    if (live) return open(module, opts, dir, [...(plusargs ?? []), testMutantPlusarg(index + 1)]);
  }
  return open(module, opts, mutate ? mutatedDir(module, mutate, opts.rtlDir, opts.mutateModule ?? module, opts.config) : opts.rtlDir, plusargs);
}

/** `module` built from `rtlDir` (a mutant's sources, or as `openDut` is given) and opened with `plusargs`. */
function open(module: string, opts: DutOptions, rtlDir: string | undefined, plusargs: readonly string[] | undefined): { src: ModuleSources; compiled: CompiledModel; model: SimModel } {
  const src = moduleSources(module, { ...(rtlDir ? { rtlDir } : {}), ...(opts.config ? { config: opts.config } : {}) });
  const compiled = buildModel({
    top: src.top,
    sources: [...src.sources],
    ports: src.ports.map((p) => ({ name: p.name, direction: p.direction, width: p.width })),
    trace: opts.vcd !== undefined && traceFormatOf(opts.vcd),
    portsFrom: src.origin === 'generated' ? `the generator's port list` : `${join(src.origin, 'manifest.json')}`,
    ...(opts.sampledInputs !== undefined ? { sampledInputs: opts.sampledInputs } : {}),
    ...(opts.extraFlags ? { extraFlags: opts.extraFlags } : {}),
    optimize: opts.optimize ?? (opts.mutate ? 'build' : 'run'),
  });
  const model = SimModel.open(compiled, { ...(plusargs && { plusargs }) });
  if (opts.vcd) model.waveform(opts.vcd, opts.traceWindow);
  return { src, compiled, model };
}

/**
 * A content-addressed directory under the cache's gen/ holding the sources of `module` with its own file
 * (`<module>.v`, else the last one listed) mutated and the others copied, and their rnic.f; generated
 * with `config` (its QPs name the blocks inside a top).
 */
function mutatedDir(module: string, mutate: (verilog: string) => string, rtlDir: string | undefined, target: string, config: RnicConfig | undefined): string {
  const sources = moduleSources(module, { ...(rtlDir ? { rtlDir } : {}), ...(config ? { config } : {}) }).sources;
  const own = sources.findIndex((s) => basename(s) === `${target}.v`);
  if (own < 0 && target !== module) throw new Error(`mutate: ${module} has no module ${target}`);
  const at = own >= 0 ? own : sources.length - 1;
  const files = sources.map((s, i) => ({ name: basename(s), text: i === at ? mutate(readFileSync(s, 'utf8')) : readFileSync(s, 'utf8') }));
  const hash = createHash('sha256');
  for (const f of files) hash.update(f.text);
  const dir = join(cacheDir('gen'), `${module}-mutated-${hash.digest('hex').slice(0, 16)}`);
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.name), f.text);
  writeFileSync(join(dir, 'rnic.f'), files.map((f) => f.name).join('\n') + '\n');
  return dir;
}
