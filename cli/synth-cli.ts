import { synthesize, type SynthResult } from '../flow/synth';
import type { SynthTarget } from '../flow/targets';
import { moduleSources } from '../hdl-gen/gen/sources';
import { loadConfig } from './gen-cli';
import { UsageError } from './scenario-cli';

export const SYNTH_TARGETS: readonly SynthTarget[] = ['ice40', 'generic', 'xilinx'];

/** `rnic synth`: the module's Verilog (generated, or from --rtl) through yosys (and nextpnr for ice40). */
export function runSynth(opts: { module: string; target: string; config?: string; rtl?: string }): SynthResult {
  if (!SYNTH_TARGETS.includes(opts.target as SynthTarget)) throw new UsageError(`--target must be one of ${SYNTH_TARGETS.join(', ')}, got '${opts.target}'`);
  let src;
  try {
    src = moduleSources(opts.module, { config: loadConfig(opts.config), ...(opts.rtl !== undefined && { rtlDir: opts.rtl }) });
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError((e as Error).message);
  }
  return synthesize({ top: src.top, sources: src.sources, target: opts.target as SynthTarget });
}

export function formatSynth(r: SynthResult): string {
  const rows: [string, string | number | undefined | null][] = [
    ['module', r.top],
    ['target', r.device ? `${r.target} (${r.device})` : r.target],
    ['cells', r.cells],
    ['LUTs', r.luts],
    ['flip-flops', r.ffs],
    ['carry cells', r.carries],
    ['logic depth', r.logicDepth],
    ['Fmax', r.fmaxMHz === undefined ? undefined : r.fmaxMHz === null ? 'not placed' : `${r.fmaxMHz.toFixed(1)} MHz`],
    ['fits', r.fits === undefined ? undefined : String(r.fits)],
  ];
  const lines = rows.filter(([, v]) => v !== undefined).map(([k, v]) => `${k.padEnd(12)} ${v}`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  lines.push(`logs: ${r.logDir}${r.cached ? ' (cached result)' : ''}`);
  return lines.join('\n');
}
