import { synthesize, type SynthResult } from '../flow/synth';
import type { SynthTarget } from '../flow/targets';
import { RtlError } from '../hdl-gen/gen/rtl-error';
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
    if (e instanceof UsageError || e instanceof RtlError) throw e;
    throw new UsageError((e as Error).message);
  }
  return synthesize({ top: src.top, sources: src.sources, target: opts.target as SynthTarget });
}

/** "19 (RAMB18E1 17, RAMB36E1 2)": a count with the cell types it sums. */
function withTypes(n: number, r: SynthResult, types: RegExp): string {
  const parts = Object.entries(r.cellTypes ?? {})
    .filter(([t]) => types.test(t))
    .map(([t, k]) => `${t} ${k}`);
  return parts.length === 0 ? String(n) : `${n} (${parts.join(', ')})`;
}

/**
 * "yes: 1594 of 7680 ICESTORM_LC, 3 of 32 ICESTORM_RAM on hx8k-ct256" or "no: needs 15564 of
 * 7680 ICESTORM_LC, 74 of 32 ICESTORM_RAM on hx8k-ct256": logic cells and block RAMs always,
 * any other over-used resource too. Of the wrapped design (see the note).
 */
function fitLine(r: SynthResult): string {
  const shown = Object.entries(r.utilisation ?? {}).filter(([bel, u]) => bel === 'ICESTORM_LC' || bel === 'ICESTORM_RAM' || u.used > u.total);
  const usage = shown.map(([bel, u]) => `${u.used} of ${u.total} ${bel}`).join(', ');
  const on = r.device ? ` on ${r.device}` : '';
  if (r.fits) return `yes: ${usage}${on}`;
  return usage === '' ? 'no (see the note)' : `no: needs ${usage}${on}`;
}

/** abc9's target and the slowest path in its model: what sets how deep every other path may be mapped. */
function abc9Line(a: NonNullable<SynthResult['abc9']>): string {
  const target = a.targetPs === null ? 'no target in the log' : `${a.targetPs} ps target`;
  if (!a.slowest) return target;
  const { ps, start, end, luts, carries } = a.slowest;
  return `${target}; slowest path ${start} -> ${end}: ${ps} ps, ${luts} LUTs${carries ? `, ${carries} CARRY4` : ''} (flow/abc9-delay.ts)`;
}

export function formatSynth(r: SynthResult): string {
  const rows: [string, string | number | undefined | null][] = [
    ['module', r.top],
    ['target', r.device ? `${r.target} (${r.device})` : r.target],
    ['cells', r.cells],
    ['LUTs', r.luts],
    ['flip-flops', r.ffs],
    ['carry cells', r.carries],
    ['block RAMs', r.rams === undefined ? undefined : withTypes(r.rams, r, /^(SB_RAM40_4K|RAMB)/)],
    ['LUT RAMs', r.lutRams === undefined ? undefined : withTypes(r.lutRams, r, /^RAM\d/)],
    ['logic depth', r.logicDepth],
    ['LUT levels (register to register)', r.lutLevels],
    ['all-cell depth', r.allCellDepth],
    ['critical path', r.criticalPath ? `${r.criticalPath.start} -> ${r.criticalPath.end}` : undefined],
    ['abc9 delay', r.abc9 ? abc9Line(r.abc9) : undefined],
    ['Fmax', r.fmaxMHz === undefined ? undefined : r.fmaxMHz === null ? 'not placed' : `${r.fmaxMHz.toFixed(1)} MHz`],
    ['fits', r.fits === undefined ? undefined : fitLine(r)],
  ];
  const lines = rows.filter(([, v]) => v !== undefined).map(([k, v]) => `${k.padEnd(12)} ${v}`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  lines.push(`logs: ${r.logDir}${r.cached ? ' (cached result)' : ''}`);
  return lines.join('\n');
}
