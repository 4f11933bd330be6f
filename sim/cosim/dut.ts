import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, moduleSources, type ModuleSources } from '../../hdl-gen/gen/sources';
import { buildModel, type CompiledModel } from '../verilator/build';
import { SimModel } from '../verilator/model';

export interface DutOptions {
  /** The user's Verilog (a directory with rnic.f, as `rnic gen` writes) instead of the generated. */
  readonly rtlDir?: string;
  /** Build the traced variant and dump a VCD here. */
  readonly vcd?: string;
  /**
   * Edits the (single-file) Verilog before it is built: for tests that show the checks catch a
   * broken RTL. The edited file goes through the same path as a user's --rtl directory.
   */
  readonly mutate?: (verilog: string) => string;
}

/**
 * A generated block (or the user's Verilog of it in `rtlDir`) built by Verilator and opened:
 * the first step of every co-simulation.
 */
export function openDut(module: string, opts: DutOptions = {}): { src: ModuleSources; compiled: CompiledModel; model: SimModel } {
  const rtlDir = opts.mutate ? mutatedDir(module, opts.mutate, opts.rtlDir) : opts.rtlDir;
  const src = moduleSources(module, rtlDir ? { rtlDir } : {});
  const compiled = buildModel({
    top: src.top,
    sources: [...src.sources],
    ports: src.ports.map((p) => ({ name: p.name, direction: p.direction, width: p.width })),
    trace: opts.vcd !== undefined,
  });
  const model = SimModel.open(compiled);
  if (opts.vcd) model.vcd(opts.vcd);
  return { src, compiled, model };
}

/** A content-addressed directory under .cache/gen holding the mutated Verilog of `module` and its rnic.f. */
function mutatedDir(module: string, mutate: (verilog: string) => string, rtlDir: string | undefined): string {
  const [source, ...rest] = moduleSources(module, rtlDir ? { rtlDir } : {}).sources;
  if (rest.length > 0) throw new Error(`mutate needs a single-file ${module}, got ${rest.length + 1} files`);
  const text = mutate(readFileSync(source!, 'utf8'));
  const dir = join(REPO_ROOT, '.cache', 'gen', `${module}-mutated-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${module}.v`), text);
  writeFileSync(join(dir, 'rnic.f'), `${module}.v\n`);
  return dir;
}
