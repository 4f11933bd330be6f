import { cosimCrc32c, type CrcCosimResult } from '../sim/cosim/crc32c';
import { cosimMpaTx, type MpaTxCosimResult } from '../sim/cosim/mpa-tx';
import { DATAPATH_WIDTHS } from '../hdl-gen/gen/config';
import { UsageError } from './scenario-cli';

export const COSIM_DUTS = ['crc32c', 'mpa_tx'] as const;

export type CosimResult = CrcCosimResult | MpaTxCosimResult;

export interface CosimArgs {
  readonly dut: string;
  readonly width: number;
  readonly seed: number;
  readonly frames: number;
  readonly rtl?: string;
  readonly vcd?: string;
}

export function runCosim(a: CosimArgs): CosimResult {
  if (!COSIM_DUTS.includes(a.dut as (typeof COSIM_DUTS)[number])) throw new UsageError(`--dut must be one of ${COSIM_DUTS.join(', ')}, got '${a.dut}'`);
  if (!(DATAPATH_WIDTHS as readonly number[]).includes(a.width)) throw new UsageError(`--width must be one of ${DATAPATH_WIDTHS.join(', ')}, got ${a.width}`);
  if (!Number.isInteger(a.frames) || a.frames < 1) throw new UsageError(`--frames must be a positive integer, got ${a.frames}`);
  if (!Number.isInteger(a.seed) || a.seed < 0 || a.seed > 0xffffffff) throw new UsageError(`--seed must be a 32-bit unsigned integer, got ${a.seed}`);
  const common = { width: a.width, seed: a.seed, ...(a.rtl !== undefined && { rtlDir: a.rtl }), ...(a.vcd !== undefined && { vcd: a.vcd }) };
  try {
    if (a.dut === 'mpa_tx') {
      // Correctness under random back-pressure; efficiency and cycles per FPDU at full rate.
      const checked = cosimMpaTx({ ...common, fpdus: a.frames });
      const { vcd: _vcd, ...noVcd } = common;
      const fullRate = cosimMpaTx({ ...noVcd, fpdus: a.frames, markers: checked.markers, crc: checked.crc, sourcePause: 0, sinkPause: 0 });
      return {
        ...checked,
        mismatches: checked.mismatches + fullRate.mismatches,
        efficiency: fullRate.efficiency,
        bound: fullRate.bound,
        cycleCheck: fullRate.cycleCheck,
        ...(!checked.firstMismatch && fullRate.firstMismatch && { firstMismatch: fullRate.firstMismatch }),
      };
    }
    return cosimCrc32c({ ...common, frames: a.frames });
  } catch (e) {
    const msg = (e as Error).message;
    if (a.rtl !== undefined && /rnic\.f|does not exist|no module/.test(msg)) throw new UsageError(msg);
    throw e;
  }
}

export function formatCosim(r: CosimResult): string {
  if (r.dut === 'mpa_tx') return formatMpaTx(r);
  return formatCrc(r);
}

function formatMpaTx(r: MpaTxCosimResult): string {
  const c = r.cycleCheck;
  const lines = [
    `${r.module} (${r.rtl}): ${r.fpdus} FPDUs, ${r.payloadBytes} ULPDU octets, ${r.wireBytes} on the wire; markers ${r.markers ? 'on' : 'off'}, CRC ${r.crc ? 'on' : 'off'}, S0 ${r.s0}, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; at full rate: efficiency ${(100 * r.efficiency).toFixed(2)}% of the width, bound ${(100 * r.bound).toFixed(2)}% (${((100 * r.efficiency) / r.bound).toFixed(2)}% of it)`,
    `cycles per FPDU vs the cost model: ${c.within5Percent}/${c.fpdus} within ±5%, largest error ${(100 * c.maxError).toFixed(1)}%`,
    r.mismatches ? `MISMATCH: ${r.mismatches} FPDUs differ from the model` : 'every FPDU equals the model octet for octet',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: FPDU ${m.fpdu} (ULPDU ${m.ulpduLength} octets, seq ${m.startSeq}), first difference at octet ${m.firstDifference}`);
    lines.push(`  model ${m.expected.slice(Math.max(0, 2 * m.firstDifference - 16), 2 * m.firstDifference + 48)}`);
    lines.push(`  RTL   ${m.actual.slice(Math.max(0, 2 * m.firstDifference - 16), 2 * m.firstDifference + 48)}`);
    lines.push(`replay: rnic cosim --dut mpa_tx --width ${r.width} --seed ${r.seed} --frames ${r.fpdus} --vcd tx.vcd`);
  }
  return lines.join('\n');
}

function formatCrc(r: CrcCosimResult): string {
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
