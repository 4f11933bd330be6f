import { cosimMpaRx, type MpaRxCosimResult } from './mpa-rx';
import { cosimMpaTx, type MpaTxCosimResult } from './mpa-tx';
import { cosimRx, measureRxPlacement, type RxCosimResult } from './rx';
import type { DutSelection } from '../harness/open-dut';

/**
 * The block co-simulations `rnic cosim` runs that are more than one harness call: each MPA block
 * checked under back-pressure and then measured at full rate, both MPA blocks together, and the
 * receive path with its placement rate.
 */

type Common = { readonly width: number; readonly seed: number } & DutSelection;

/** mpa_tx: the QPs sharing it. */
type MpaTxCommon = Common & { readonly qps?: number };

/**
 * `--dut rx`: the receive path ddp_rx_w<W> against the model endpoint, and its placement rate;
 * `--dut rnic_rx`: the same with mpa_rx in front (rnic_rx_w<W>), fed framed TCP payload.
 */
export interface RxDutResult extends RxCosimResult {
  readonly dut: 'rx' | 'rnic_rx';
  /** Back-to-back 4 KiB Write ULPDUs, no back-pressure: payload octets per cycle ÷ width after the first ULPDU. */
  readonly efficiency: number;
  readonly bound: number;
  readonly placementLatency: number;
}

/** `--dut mpa`: both MPA blocks, TX octet for octet and RX FPDU by FPDU (with faults). */
export interface MpaCosimResult {
  readonly dut: 'mpa';
  readonly width: number;
  readonly seed: number;
  readonly frames: number;
  readonly faults: number;
  readonly mismatches: number;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
  readonly payloadBytes: number;
  /** TX at full rate: ULPDU octets per cycle ÷ width, and the best the FPDU overhead allows. */
  readonly efficiency: number;
  readonly bound: number;
  readonly firstMismatch?: MpaTxCosimResult['firstMismatch'] | MpaRxCosimResult['firstMismatch'];
  readonly tx: MpaTxCosimResult;
  readonly rx: MpaRxCosimResult;
}

/**
 * mpa_rx: correctness (random segments, back-pressure and faults); then, at full rate with one
 * FPDU per segment, the input cycles per FPDU against the cost model.
 */
export function runMpaRx(common: Common, fpdus: number, faults: number): MpaRxCosimResult {
  const checked = cosimMpaRx({ ...common, fpdus, faults });
  const { vcd: _vcd, ...noVcd } = common;
  const fullRate = cosimMpaRx({ ...noVcd, fpdus: Math.min(fpdus, 1000), sourcePause: 0, sinkPause: 0, segments: 'fpdu' });
  return {
    ...checked,
    mismatches: checked.mismatches + fullRate.mismatches,
    cycleCheck: fullRate.cycleCheck,
    ...(!checked.firstMismatch && fullRate.firstMismatch && { firstMismatch: fullRate.firstMismatch }),
  };
}

/** mpa_tx: correctness under random back-pressure; efficiency and cycles per FPDU at full rate. */
export function runMpaTx(common: MpaTxCommon, fpdus: number): MpaTxCosimResult {
  const checked = cosimMpaTx({ ...common, fpdus });
  const { vcd: _vcd, ...noVcd } = common;
  const fullRate = cosimMpaTx({ ...noVcd, fpdus, markers: checked.markers, crc: checked.crc, sourcePause: 0, sinkPause: 0 });
  return {
    ...checked,
    mismatches: checked.mismatches + fullRate.mismatches,
    efficiency: fullRate.efficiency,
    bound: fullRate.bound,
    cycleCheck: fullRate.cycleCheck,
    ...(!checked.firstMismatch && fullRate.firstMismatch && { firstMismatch: fullRate.firstMismatch }),
  };
}

/** Both MPA blocks: mpa_tx then mpa_rx, each as above. */
export function runMpa(common: Common, frames: number, faults: number): MpaCosimResult {
  const tx = runMpaTx(common, frames);
  const rx = runMpaRx(common, frames, faults);
  const first = tx.firstMismatch ?? rx.firstMismatch;
  return {
    dut: 'mpa',
    width: common.width,
    seed: common.seed,
    frames,
    faults,
    mismatches: tx.mismatches + rx.mismatches,
    cycles: tx.cycles + rx.cycles,
    simCyclesPerSecond: Math.round((tx.cycles + rx.cycles) / (tx.cycles / tx.simCyclesPerSecond + rx.cycles / rx.simCyclesPerSecond)),
    payloadBytes: tx.payloadBytes + rx.payloadBytes,
    efficiency: tx.efficiency,
    bound: tx.bound,
    ...(first && { firstMismatch: first }),
    tx,
    rx,
  };
}

/** The receive path against the model endpoint, then its placement rate. */
export function runRx(common: Common, dut: 'rx' | 'rnic_rx', messages: number, faults: number): RxDutResult {
  const res = cosimRx({ ...common, messages, faults, mpa: dut === 'rnic_rx' });
  const rate = measureRxPlacement(common.width, 4096, 32, common.rtlDir);
  return { ...res, dut, efficiency: rate.efficiency, bound: rate.bound, placementLatency: rate.latency };
}
