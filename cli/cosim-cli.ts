import { cosimCrc32c, type CrcCosimResult } from '../sim/cosim/crc32c';
import { DATAPATH_WIDTHS } from '../hdl-gen/gen/config';
import { UsageError } from './scenario-cli';

export const COSIM_DUTS = ['crc32c'] as const;

export interface CosimArgs {
  readonly dut: string;
  readonly width: number;
  readonly seed: number;
  readonly frames: number;
  readonly rtl?: string;
  readonly vcd?: string;
}

export function runCosim(a: CosimArgs): CrcCosimResult {
  if (!COSIM_DUTS.includes(a.dut as (typeof COSIM_DUTS)[number])) throw new UsageError(`--dut must be one of ${COSIM_DUTS.join(', ')}, got '${a.dut}'`);
  if (!(DATAPATH_WIDTHS as readonly number[]).includes(a.width)) throw new UsageError(`--width must be one of ${DATAPATH_WIDTHS.join(', ')}, got ${a.width}`);
  if (!Number.isInteger(a.frames) || a.frames < 1) throw new UsageError(`--frames must be a positive integer, got ${a.frames}`);
  if (!Number.isInteger(a.seed) || a.seed < 0 || a.seed > 0xffffffff) throw new UsageError(`--seed must be a 32-bit unsigned integer, got ${a.seed}`);
  try {
    return cosimCrc32c({ width: a.width, seed: a.seed, frames: a.frames, ...(a.rtl !== undefined && { rtlDir: a.rtl }), ...(a.vcd !== undefined && { vcd: a.vcd }) });
  } catch (e) {
    const msg = (e as Error).message;
    if (a.rtl !== undefined && /rnic\.f|does not exist|no module/.test(msg)) throw new UsageError(msg);
    throw e;
  }
}

export function formatCosim(r: CrcCosimResult): string {
  const lines = [
    `${r.module} (${r.rtl}): ${r.frames} frames, ${r.payloadBytes} octets, ${r.flaggedFrames} with a non-contiguous tkeep, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s (build ${r.buildCached ? 'cached' : `${r.buildSeconds.toFixed(1)} s`})`,
    r.mismatches ? `MISMATCH: ${r.mismatches} frames differ from the model` : 'every CRC equals the model',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: frame ${m.frame} (${m.length} octets): model ${m.expected}, RTL ${m.actual}`);
    for (const b of m.beats) lines.push(`  tkeep ${b.tkeep.padEnd(20)} tdata ${b.data}`);
    lines.push(`replay: rnic cosim --dut crc32c --width ${r.width} --seed ${r.seed} --frames ${r.frames} --vcd crc.vcd`);
  }
  return lines.join('\n');
}
