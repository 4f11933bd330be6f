import type { AtomicCosimResult } from './atomic-unit';
import type { MpaCosimResult, RxDutResult } from './block-runs';
import type { CrcCosimResult } from './crc32c';
import type { DdpRxHdrCosimResult } from './ddp-rx-hdr';
import type { MpaRxCosimResult } from './mpa-rx';
import type { MpaRxSharedResult } from './mpa-rx-shared';
import type { MpaTxCosimResult } from './mpa-tx';
import type { FairnessResult } from './rnic-fairness';
import type { StagTableCosimResult } from './stag-table';
import type { UlpduReasmResult } from './ulpdu-reasm';

/** The text reports of the block co-simulations (`rnic cosim --dut <block>`). */

const counts = (o: Readonly<Record<string, number>>): string => Object.entries(o).map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';

export function formatDdpRxHdr(r: DdpRxHdrCosimResult): string {
  const lines = [
    `${r.module} (${r.rtl}): ${r.ulpdus} ULPDUs, ${r.inputBeats} input beats, ${r.coverage.payloadPackets} payload packets, RFC 7306 ${r.rfc7306 ? 'on' : 'off'}, seed ${r.seed}`,
    `${r.cycles} cycles; checkHeader outcomes: ${counts(r.coverage.outcomes)}`,
    `error codes: ${counts(r.coverage.errors)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every descriptor and payload octet equals checkHeader',
  ];
  if (r.firstMismatch) lines.push(`first mismatch at cycle ${r.firstMismatch.cycle}: ${JSON.stringify(r.firstMismatch).slice(0, 400)}`);
  return lines.join('\n');
}

export function formatRx(r: RxDutResult): string {
  const out = [
    `${r.dut === 'rnic_rx' ? `rnic_rx_w${r.width} (mpa_rx into ddp_rx)` : `ddp_rx_w${r.width}`}: ${r.messages} peer messages in ${r.episodes} streams, ${r.ulpdus} ULPDUs${r.dut === 'rnic_rx' ? ` in ${r.fpdus} FPDUs` : ''}, ${r.payloadBytes} tagged payload octets, seed ${r.seed}`,
    `compared one by one: ${r.events} events (completions, Terminates), ${r.responses} response ULPDUs; host memory after every ULPDU`,
    `opcodes: ${counts(r.opcodes)}`,
    `error codes raised: ${counts(r.errorsHit)}`,
    r.errorsMissed.length ? `error codes not raised: ${r.errorsMissed.join('; ')}` : 'every DDP/RDMAP error code of the spec was raised',
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e3).toFixed(0)} k cycles/s; placement of 4 KiB Write ULPDUs: ${(100 * r.efficiency).toFixed(2)}% of the width (bound ${(100 * r.bound).toFixed(2)}%), first write ${r.placementLatency} cycles after the first beat`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every event, response ULPDU and memory octet equals the model',
    r.violations ? `PROTECTION VIOLATIONS: ${r.violations}` : 'protection: no write outside what the STag table and the posted buffers allow',
  ];
  if (r.firstMismatch) out.push(`first mismatch: stream ${r.firstMismatch.episode}, ULPDU ${r.firstMismatch.ulpdu}, cycle ${r.firstMismatch.cycle}: ${r.firstMismatch.what}`, `  model ${r.firstMismatch.expected.slice(0, 160)}`, `  RTL   ${r.firstMismatch.actual.slice(0, 160)}`);
  if (r.firstViolation) out.push(`first violation: ${r.firstViolation}`);
  return out.join('\n');
}

export function formatAtomic(r: AtomicCosimResult): string {
  const lines = [
    `atomic_unit: ${r.operations} operations (${r.bigEndian ? 'big' : 'little'}-endian targets), ${r.reads} reads, ${r.writes} write-backs, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; coverage: ${counts(r.coverage)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every response, memory access and the final memory equal the model',
    ...r.violations.slice(0, 5).map((v) => `protocol violation: ${v}`),
  ];
  if (r.firstMismatch) lines.push(`first mismatch at cycle ${r.firstMismatch.cycle}: ${JSON.stringify(r.firstMismatch)}`);
  return lines.join('\n');
}

export function formatFairness(r: FairnessResult): string {
  const m = r.firstMismatch;
  return [
    `${r.module}: ${r.qps} QPs, every QP's Writes and Read Response at once, then one QP alone: ${r.fpdus} FPDUs, ${r.cycles} cycles, seed ${r.seed}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences` : 'every FPDU equals the model; the QPs and each QP\u2019s two queues take turns',
    ...(m ? [`first mismatch at cycle ${m.cycle}: QP ${m.qp}: ${m.what}`, `  expected ${m.expected.slice(0, 160)}`, `  RTL      ${m.actual.slice(0, 160)}`] : []),
  ].join('\n');
}

export function formatStagTable(r: StagTableCosimResult): string {
  const lines = [
    `${r.module}: ${r.lookups} lookups, ${r.invalidates} invalidates, ${r.configs} config writes, latency ${r.latency}, seed ${r.seed}`,
    `${r.cycles} cycles; outcomes: ${counts(r.faultsSeen)}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} responses differ from the model` : 'every lookup and invalidate response equals the model, in the cycle the latency says',
  ];
  if (r.firstMismatch) lines.push(`first mismatch at cycle ${r.firstMismatch.cycle}: ${JSON.stringify(r.firstMismatch)}`);
  return lines.join('\n');
}

export function formatMpaRx(r: MpaRxCosimResult): string {
  const codes = counts(r.errorCodes);
  const lines = [
    `${r.module} (${r.rtl}): ${r.streams} streams, ${r.fpdus} FPDUs, ${r.delivered} delivered, ${r.payloadBytes} ULPDU octets, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; ${r.inputBeatsPerCycle.toFixed(3)} input beats per busy cycle`,
    `first errors compared with the model: ${r.errorsChecked} (${codes})`,
    ...(r.cycleCheck ? [`input cycles per FPDU vs the cost model (full rate, one FPDU per segment): ${r.cycleCheck.within5Percent}/${r.cycleCheck.fpdus} within ±5%, largest error ${(100 * r.cycleCheck.maxError).toFixed(1)}%`] : []),
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : 'every ULPDU, verdict and first error equals the model',
  ];
  if (r.firstMismatch) lines.push(`first mismatch at cycle ${r.firstMismatch.cycle}: ${JSON.stringify(r.firstMismatch).slice(0, 400)}`);
  return lines.join('\n');
}

export function formatMpaRxShared(r: MpaRxSharedResult): string {
  const lines = [
    `${r.module}: ${r.segments} segments in random QP order (${r.switches} context switches), ${r.fpdus} FPDUs, ${r.delivered} delivered, seed ${r.seed}`,
    `${r.cycles} cycles; first errors compared with the model: ${r.errorsChecked}`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the model` : "every QP's ULPDUs, verdicts and first error equal the model",
  ];
  const m = r.firstMismatch;
  if (m) lines.push(`first mismatch${m.qp >= 0 ? `: QP ${m.qp}, FPDU ${m.fpdu},` : ':'} cycle ${m.cycle}: ${m.what}`, `  model ${m.expected.slice(0, 120)}`, `  RTL   ${m.actual.slice(0, 120)}`);
  return lines.join('\n');
}

export function formatUlpduReasm(r: UlpduReasmResult): string {
  const lines = [
    `${r.module}: ${r.segments} segments in random QP order (${r.switches} context switches), ${r.ulpdus} ULPDUs, ${r.delivered} delivered, ${r.restarts} streams restarted part way, seed ${r.seed}`,
    `${r.cycles} cycles`,
    r.mismatches ? `MISMATCH: ${r.mismatches} differences from the ULPDUs sent` : 'every ULPDU comes out whole, in order per QP, with its verdict',
  ];
  const m = r.firstMismatch;
  if (m) lines.push(`first mismatch: QP ${m.qp}, ULPDU ${m.ulpdu}, beat ${m.beat}, cycle ${m.cycle}: ${m.what}`, `  expected ${m.expected.slice(0, 120)}`, `  RTL      ${m.actual.slice(0, 120)}`);
  return lines.join('\n');
}

export function formatMpaTx(r: MpaTxCosimResult): string {
  const c = r.cycleCheck;
  const lines = [
    `${r.module} (${r.rtl}): ${r.fpdus} FPDUs, ${r.payloadBytes} ULPDU octets, ${r.wireBytes} on the wire; ${r.qps > 1 ? `${r.qps} QPs interleaved, each its own S0, markers and CRC` : `markers ${r.markers ? 'on' : 'off'}, CRC ${r.crc ? 'on' : 'off'}, S0 ${r.s0}`}, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s; at full rate: efficiency ${(100 * r.efficiency).toFixed(2)}% of the width, bound ${(100 * r.bound).toFixed(2)}% (${((100 * r.efficiency) / r.bound).toFixed(2)}% of it)`,
    `cycles per FPDU vs the cost model: ${c.within5Percent}/${c.fpdus} within ±5%, largest error ${(100 * c.maxError).toFixed(1)}%`,
    r.mismatches ? `MISMATCH: ${r.mismatches} FPDUs differ from the model` : 'every FPDU equals the model octet for octet',
  ];
  const m = r.firstMismatch;
  if (m) {
    const qp = r.qps > 1 ? ` of QP ${m.qp}` : '';
    lines.push(`first mismatch: FPDU ${m.fpdu}${qp} at cycle ${m.cycle} (ULPDU ${m.ulpduLength} octets, seq ${m.startSeq}), ${m.tid ?? `first difference at octet ${m.firstDifference}`}`);
    lines.push(`  model ${m.expected.slice(Math.max(0, 2 * m.firstDifference - 16), 2 * m.firstDifference + 48)}`);
    lines.push(`  RTL   ${m.actual.slice(Math.max(0, 2 * m.firstDifference - 16), 2 * m.firstDifference + 48)}`);
  }
  return lines.join('\n');
}

export function formatCrc(r: CrcCosimResult): string {
  const lines = [
    `${r.module} (${r.rtl}): ${r.frames} frames, ${r.payloadBytes} octets, ${r.flaggedFrames} with a non-contiguous tkeep, seed ${r.seed}`,
    `${r.cycles} cycles at ${(r.simCyclesPerSecond / 1e6).toFixed(2)} M cycles/s (build ${r.buildCached ? 'cached' : `${r.buildSeconds.toFixed(1)} s`})`,
    r.mismatches ? `MISMATCH: ${r.mismatches} frames differ from the model` : 'every CRC equals the model',
  ];
  const m = r.firstMismatch;
  if (m) {
    lines.push(`first mismatch: frame ${m.frame} at cycle ${m.cycle} (${m.length} octets): model ${m.expected}, RTL ${m.actual}`);
    for (const b of m.beats) lines.push(`  tkeep ${b.tkeep.padEnd(20)} tdata ${b.data}`);
  }
  return lines.join('\n');
}

export function formatMpa(r: MpaCosimResult): string {
  return [formatMpaTx(r.tx), formatMpaRx(r.rx), r.mismatches ? `MISMATCH: ${r.mismatches}` : 'mpa: TX and RX agree with the model'].join('\n');
}
