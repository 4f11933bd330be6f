import { openTop } from './rnic-bench';
import { topConfig } from './rnic-axi-bench';
import { measureTopRx, measureTopTx } from './rnic-rate';

/** A line-rate figure of the AXI4 top beside the native top's, from the same run of the same harness. */
export interface AxiRateRow {
  readonly name: string;
  readonly width: number;
  readonly qps: number;
  /** rnic_top_axi_mem_w<W>, and rnic_top_w<W> of the same configuration. */
  readonly axi: number;
  readonly native: number;
  readonly unit: string;
}

/**
 * Issue 19's figure: 4 KiB RDMA Writes at full rate (rnic-rate.ts: the harness and options of
 * rnicRateFigures, exact Verilator cycles, no back-pressure), transmit on one QP and on four with
 * memory reads answered 4 cycles after the request (after each AR on the AXI4 top), on one QP
 * behind 200 cycles, and receive placement at MULPDU 8192 and 1460 (mem_wr beats, W beats on the
 * AXI4 top), on rnic_top_axi_mem_w<W> and on rnic_top_w<W>
 * of the same configuration (`qps` QPs, default 4: the datapath is the same at any count).
 */
export function axiRateFigures(o: { readonly widths?: readonly number[]; readonly writes?: number; readonly qps?: number } = {}): AxiRateRow[] {
  const writes = o.writes ?? 64;
  const qps = o.qps ?? 4;
  const rows: AxiRateRow[] = [];
  for (const W of o.widths ?? [64]) {
    const side = (memory: 'axi4' | 'native'): number[] => {
      const model = openTop(W, { config: topConfig(W, qps, memory) });
      try {
        const tx = (n: number, latency: number) => measureTopTx(W, { writes, model, qps: n, latency }).bytesPerCycle;
        const rx = measureTopRx(W, { writes, model });
        return [tx(1, 4), tx(Math.min(4, qps), 4), tx(1, 200), rx.bytesPerCycle, rx.steadyBytesPerCycle, measureTopRx(W, { writes, model, mulpdu: 1460 }).bytesPerCycle];
      } finally {
        model.close();
      }
    };
    const axi = side('axi4');
    const native = side('native');
    const names = [
      'transmit, 4 KiB RDMA Writes, 1 QP, MULPDU 8192, markers+CRC, read latency 4: payload',
      `transmit, 4 KiB RDMA Writes, ${Math.min(4, qps)} QPs, MULPDU 8192, markers+CRC, read latency 4: payload`,
      'transmit, 4 KiB RDMA Writes, 1 QP, MULPDU 8192, markers+CRC, read latency 200: payload',
      'receive placement, 4 KiB RDMA Writes, MULPDU 8192, markers+CRC: payload',
      'receive placement, 4 KiB RDMA Writes, MULPDU 8192, markers+CRC: payload, steady state',
      'receive placement, 4 KiB RDMA Writes, MULPDU 1460, markers+CRC: payload',
    ];
    names.forEach((name, i) => rows.push({ name, width: W, qps, axi: axi[i]!, native: native[i]!, unit: 'B/cycle' }));
  }
  return rows;
}
