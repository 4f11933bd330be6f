import { WORK_REQUEST } from '../../hdl-gen/blocks/records';
import { AOpCode, u64ToBytes } from '../../ts-model/rdmap/atomics';
import { RdmapEndpoint } from '../../ts-model/rnic/endpoint';
import { Rnic } from '../../ts-model/rnic/rnic';
import type { WorkRequest } from '../../ts-model/rnic/work-request';
import { IRD_ORD_NO_NEGOTIATE } from '../../ts-model/mpa/constants';
import { prng, type Prng } from '../../ts-model/util/prng';
import type { RecordSource } from '../cocotb/record-source';
import type { SimModel } from '../verilator/model';
import type { HostMemoryPort } from '../harness/host-memory-port';
import { BackgroundMemory } from '../harness/memory';
import { openDut, type DutOptions } from '../harness/open-dut';
import { TxBlockBench, type TxBlockRunOptions, type TxRunEnd } from './tx-bench';
import { txMismatches, type UlpduMismatch } from './tx-ports';
import { WR_NOISE_FIELDS, wrFields, type TxRequest } from './wr-request';

export type { TxRequest } from './wr-request';

/**
 * Co-simulation of ddp_tx_w<W> (hdl-gen/blocks/ddp-tx.ts) against the model's requester:
 * an `RdmapEndpoint` (ORD not negotiated, so no Read or Atomic waits for credit) is posted the
 * same work requests, Writes and Sends carrying the octets host memory holds at their address,
 * and every ULPDU `pull()` returns is compared octet for octet with the RTL's m_axis packets.
 *
 * Host memory is a `BackgroundMemory` (sim/harness/memory.ts: a hash of the address, read-only
 * here). Reads are answered in order, minLatency..maxLatency cycles after their handshake. Checked
 * on the way: every read address a multiple of W, rd_valid / rd_addr and m_axis beats held until
 * taken, m_axis beats full but the last (tkeep 2^k − 1 there, k ≥ 1), and m_sent_valid only with
 * a taken last beat, once per work request.
 */

const MASK64 = (1n << 64n) - 1n;

// ---- the reference -------------------------------------------------------------------------------

/** The model's work request for `q` (Writes and Sends read their data from `memory`). */
function workRequest(q: TxRequest, id: number, memory: BackgroundMemory): WorkRequest {
  switch (q.kind) {
    case 'write':
      return { kind: 'write', id, stag: q.stag, to: q.to, data: memory.read(q.addr, q.len) };
    case 'send':
      return { kind: 'send', id, solicited: q.solicited, invalidate: q.invalidate, data: memory.read(q.addr, q.len) };
    case 'read':
      return { kind: 'read', id, stag: q.stag, to: q.to, length: q.len, localStag: q.sinkStag, localTo: q.sinkTo };
    case 'immediate':
      return { kind: 'immediate', id, solicited: q.solicited, data: u64ToBytes(q.imm, 'big') };
    case 'atomic':
      return {
        kind: 'atomic', id, localStag: null, localTo: 0n, aopcode: q.aopcode, stag: q.stag, to: q.to,
        addSwapData: q.addSwap, addSwapMask: q.addSwapMask, compareData: q.compare, compareMask: q.compareMask,
      };
  }
}

/** The ULPDUs `RdmapEndpoint.post()` + `pull()` send for `reqs`, in order. */
export function expectedUlpdus(reqs: readonly TxRequest[], memory: BackgroundMemory, o: { mulpdu: number; initialMsn: number }): Uint8Array[] {
  const rnic = new Rnic('ddp_tx');
  const ep = new RdmapEndpoint({ side: 'initiator', rnic, pd: 1, mulpdu: o.mulpdu, ird: IRD_ORD_NO_NEGOTIATE, ord: IRD_ORD_NO_NEGOTIATE, emit: () => {}, initialMsn: o.initialMsn });
  reqs.forEach((q, id) => ep.post(workRequest(q, id, memory)));
  return ep.pull().map((u) => u.ulpdu);
}

// ---- random workloads ------------------------------------------------------------------------------

/**
 * Random work requests of every kind: Writes and Sends of 0..maxSize octets (small, around a
 * segment or W, and large) from unaligned addresses, every Send flavour, Reads, Immediate Data
 * with and without SE, FetchAdd / CmpSwap Atomic Requests.
 */
export function randomTxRequests(r: Prng, n: number, mulpdu: number, W: number, maxSize = 20000): TxRequest[] {
  const size = (room: number) =>
    Math.max(0, Math.min(maxSize, r.pick([0, 1, r.int(1, 3 * W), r.int(0, 200), r.int(0, 200), room, room + 1, room - 1, 2 * room + r.int(-W, W), r.int(0, maxSize)])));
  const addr = () => r.u64() & ((1n << 62n) - 1n);
  const to = (room: number) => (r.bool(0.1) ? MASK64 - BigInt(r.int(0, 3 * room)) : r.u64());
  const out: TxRequest[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r.int(0, 9);
    if (kind < 3) out.push({ kind: 'write', stag: r.u32(), to: to(mulpdu - 14), addr: addr(), len: size(mulpdu - 14) });
    else if (kind < 6) out.push({ kind: 'send', solicited: r.bool(), invalidate: r.bool() ? r.u32() : null, addr: addr(), len: size(mulpdu - 18) });
    else if (kind < 7) out.push({ kind: 'read', stag: r.u32(), to: r.u64(), len: r.pick([0, r.int(0, 0xffff), r.u32()]), sinkStag: r.u32(), sinkTo: r.u64() });
    else if (kind < 8) out.push({ kind: 'immediate', solicited: r.bool(), imm: r.u64() });
    else {
      out.push({
        kind: 'atomic', aopcode: r.pick([AOpCode.FETCH_ADD, AOpCode.CMP_SWAP]), stag: r.u32(), to: r.u64() & ~7n,
        addSwap: r.u64(), addSwapMask: r.pick([0n, r.u64()]), compare: r.u64(), compareMask: r.pick([0n, r.u64()]),
      });
    }
  }
  return out;
}

// ---- one run of the RTL ------------------------------------------------------------------------------

export interface TxRunOptions extends TxBlockRunOptions<TxRequest> {
  /** Per-cycle probability of no work request offered (default 0.3). */
  readonly wrGap?: number;
}

export interface TxRun extends TxRunEnd {
  readonly sent: number;
}

/**
 * The fixture of ddp_tx_w<W>: work requests on wr_* after random gaps (every field a kind does not
 * use random), the memory read port on a background memory, the ULPDU stream on m_axis with its
 * check, and m_sent_valid, which must come only with a taken last beat.
 */
class DdpTxBench extends TxBlockBench {
  readonly wr: RecordSource<TxRequest>;
  readonly mem: HostMemoryPort;
  sent = 0;

  constructor(model: SimModel, o: TxRunOptions) {
    super(model, o.seed);
    const r = this.r;
    const report = this.report;
    const wrGap = this.pause(o.wrGap ?? 0.3);
    const rdPause = this.pause(o.rdPause ?? 0.3);
    // Atomics numbered from 1 as the model's Request Identifiers are (RFC 7306 §5.2.1: the requester picks them).
    let requestId = 1;
    this.wr = this.recordSource('wr', {
      layout: WORK_REQUEST,
      gap: wrGap,
      filler: () => ({ ...this.wr.group.random(r, WR_NOISE_FIELDS), solicited: r.int(0, 1), invalidate: r.int(0, 1), aopcode: r.int(0, 15) }),
      fields: (q) => wrFields(q, q.kind === 'atomic' ? requestId++ : 0),
      onAccept: () => this.acceptedAt.push(this.stepped),
    });
    this.mem = this.memory({ width: o.width, prefix: '', ports: 'read', memory: o.memory, rdPause, latency: { min: o.minLatency ?? 1, max: o.maxLatency ?? 6 }, report });
    this.ulpduStream(o.width, o.sinkPause);
    const h = (n: string) => model.handle(n);
    const [sentValid, tvalid, tready, tlast] = [h('m_sent_valid'), h('m_axis_tvalid'), h('m_axis_tready'), h('m_axis_tlast')];
    this.add({
      sample: () => {
        if (model.peekPreNumber(sentValid) !== 1) return;
        this.sent++;
        if (model.peekPreNumber(tvalid) !== 1 || model.peekPreNumber(tready) !== 1 || model.peekPreNumber(tlast) !== 1) report(`m_sent_valid without a taken last beat at cycle ${this.stepped}`);
      },
    });
    this.inputs('cfg').poke({ mulpdu: o.mulpdu, initialMsn: o.initialMsn >>> 0 });
    this.quiet(['wr_valid', 'rd_ready', 'rd_data_valid', 'm_axis_tready']);
  }
}

export function runDdpTx(o: TxRunOptions): TxRun {
  const W = o.width;
  const tb = new DdpTxBench(o.model ?? openDut(`ddp_tx_w${W}`, o.dut).model, o);
  tb.wr.pushAll(o.requests);
  const payload = (q: TxRequest) => (q.kind === 'write' || q.kind === 'send' ? q.len : 0);
  const budget = 2000 + o.requests.reduce((n, q) => n + payload(q) + 100, 0) * 4;
  const { stepped: _, ...end } = tb.finish(() => tb.sent >= o.requests.length, budget, `${o.requests.length} work requests sent by ddp_tx_w${W}`, o.model !== undefined);
  return { ...end, sent: tb.sent };
}

// ---- the random co-simulation ---------------------------------------------------------------------

export interface TxCosimOptions {
  readonly width: number;
  readonly seed: number;
  readonly requests: number;
  readonly mulpdu: number;
  readonly initialMsn?: number;
  readonly maxSize?: number;
  /** Per-cycle probability of a request gap and of rd / m_axis back-pressure (default 0.3). */
  readonly pause?: number;
  readonly model?: SimModel;
  readonly dut?: DutOptions;
}

export interface TxCosimResult {
  readonly module: string;
  readonly seed: number;
  readonly ulpdus: number;
  readonly mismatches: number;
  readonly firstMismatch?: UlpduMismatch;
  readonly coverage: Readonly<Record<TxRequest['kind'], number>> & { readonly octets: number; readonly msnWrapped: boolean };
}

export function cosimDdpTx(o: TxCosimOptions): TxCosimResult {
  const r = prng(o.seed);
  const W = o.width;
  const requests = randomTxRequests(r, o.requests, o.mulpdu, W, o.maxSize);
  const memory = new BackgroundMemory();
  const initialMsn = o.initialMsn ?? (0xffffffff - r.int(0, 5)) >>> 0;
  const expected = expectedUlpdus(requests, memory, { mulpdu: o.mulpdu, initialMsn });
  const p = o.pause ?? 0.3;
  const run = runDdpTx({
    width: W, requests, memory, mulpdu: o.mulpdu, initialMsn, seed: r.u32(), wrGap: p, rdPause: p, sinkPause: p,
    ...(o.model && { model: o.model }),
    ...(o.dut && { dut: o.dut }),
  });
  const sentCount = run.sent === requests.length ? [] : [{ what: 'm_sent_valid pulses', index: -1, expected: String(requests.length), actual: String(run.sent) }];
  const mismatches = txMismatches(run, expected, sentCount);
  const count = (k: TxRequest['kind']) => requests.filter((q) => q.kind === k).length;
  const qn0 = count('send') + count('immediate');
  const qn1 = count('read') + count('atomic');
  return {
    module: `ddp_tx_w${W}`,
    seed: o.seed,
    ulpdus: expected.length,
    mismatches: mismatches.length,
    ...(mismatches[0] && { firstMismatch: mismatches[0] }),
    coverage: {
      write: count('write'), send: count('send'), read: count('read'), immediate: count('immediate'), atomic: count('atomic'),
      octets: requests.reduce((n, q) => n + (q.kind === 'write' || q.kind === 'send' ? q.len : 0), 0),
      msnWrapped: initialMsn + Math.min(qn0, qn1) > 0xffffffff,
    },
  };
}
