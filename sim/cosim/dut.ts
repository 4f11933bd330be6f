import { moduleSources, type ModuleSources } from '../../hdl-gen/gen/sources';
import { buildModel, type CompiledModel } from '../verilator/build';
import { SimModel } from '../verilator/model';

/**
 * A generated block (or the user's Verilog of it in `rtlDir`) built by Verilator and opened:
 * the first step of every co-simulation. `vcd` builds the traced variant and starts dumping.
 */
export function openDut(module: string, opts: { readonly rtlDir?: string; readonly vcd?: string } = {}): { src: ModuleSources; compiled: CompiledModel; model: SimModel } {
  const src = moduleSources(module, opts.rtlDir ? { rtlDir: opts.rtlDir } : {});
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
