import { WR_KIND } from '../../hdl-gen/blocks/ddp-tx';
import { AOpCode, u64ToBytes } from '../../ts-model/rdmap/atomics';
import { RdmapEndpoint } from '../../ts-model/rnic/endpoint';
import { Rnic } from '../../ts-model/rnic/rnic';
import type { WorkRequest } from '../../ts-model/rnic/work-request';
import { IRD_ORD_NO_NEGOTIATE } from '../../ts-model/mpa/constants';
import { prng, type Prng } from '../../ts-model/util/prng';
import { random as randomPause } from '../cocotb/pause';
import { QueueSource } from '../cocotb/queue-source';
import { Testbench } from '../cocotb/testbench';
import type { SimModel } from '../verilator/model';
import { openDut, type DutOptions } from './dut';
import { BackgroundMemory } from './rdmap-tx-resp';
import { ReadPortResponder, UlpduStreamCheck, ulpduMismatches, type UlpduMismatch } from './tx-ports';

/**
 * Co-simulation of ddp_tx_w<W> (hdl-gen/blocks/ddp-tx.ts) against the model's requester:
 * an `RdmapEndpoint` (ORD not negotiated, so no Read or Atomic waits for credit) is posted the
 * same work requests, Writes and Sends carrying the octets host memory holds at their address,
 * and every ULPDU `pull()` returns is compared octet for octet with the RTL's m_axis packets.
 *
 * Host memory is the responder cosim's `BackgroundMemory` (a hash of the address, read-only
 * here). Reads are answered in order, minLatency..maxLatency cycles after their handshake. Checked
 * on the way: every read address a multiple of W, rd_valid / rd_addr and m_axis beats held until
 * taken, m_axis beats full but the last (tkeep 2^k − 1 there, k ≥ 1), and m_sent_valid only with
 * a taken last beat, once per work request.
 */

export type TxRequest =
  | { readonly kind: 'write'; readonly stag: number; readonly to: bigint; readonly addr: bigint; readonly len: number }
  | { readonly kind: 'send'; readonly solicited: boolean; readonly invalidate: number | null; readonly addr: bigint; readonly len: number }
  | { readonly kind: 'read'; readonly stag: number; readonly to: bigint; readonly len: number; readonly sinkStag: number; readonly sinkTo: bigint }
  | { readonly kind: 'immediate'; readonly solicited: boolean; readonly imm: bigint }
  | {
      readonly kind: 'atomic';
      readonly aopcode: number;
      readonly stag: number;
      readonly to: bigint;
      readonly addSwap: bigint;
      readonly addSwapMask: bigint;
      readonly compare: bigint;
      readonly compareMask: bigint;
    };

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

export interface TxRunOptions {
  readonly width: number;
  readonly requests: readonly TxRequest[];
  readonly memory: BackgroundMemory;
  readonly mulpdu: number;
  readonly initialMsn: number;
  readonly seed: number;
  /** Per-cycle probabilities (default 0.3; 0 = full rate). */
  readonly wrGap?: number;
  readonly rdPause?: number;
  readonly sinkPause?: number;
  /** Read latency, uniform in [minLatency, maxLatency] cycles after the handshake (default 1..6). */
  readonly minLatency?: number;
  readonly maxLatency?: number;
  /** An open model of ddp_tx_w<width> (reset first); otherwise one is opened and closed. */
  readonly model?: SimModel;
  readonly dut?: DutOptions;
}

export interface TxRun {
  readonly ulpdus: Uint8Array[];
  readonly violations: string[];
  /** Cycle of each work request handshake and of each ULPDU's last beat (for rate checks). */
  readonly acceptedAt: number[];
  readonly lastBeatAt: number[];
  readonly sent: number;
  readonly idleAtEnd: boolean;
}

export function runDdpTx(o: TxRunOptions): TxRun {
  const W = o.width;
  const model = o.model ?? openDut(`ddp_tx_w${W}`, o.dut).model;
  const tb = new Testbench(model);
  const r = prng(o.seed);
  const pause = (p: number | undefined) => randomPause(r.u32(), p ?? 0.3);
  const wrGap = pause(o.wrGap);
  const rdPause = pause(o.rdPause);
  const minLat = o.minLatency ?? 1;
  const maxLat = o.maxLatency ?? 6;
  const h = (n: string) => model.handle(n);
  const P = {
    mulpdu: h('cfg_mulpdu'), msn: h('cfg_initial_msn'), valid: h('wr_valid'), ready: h('wr_ready'), kind: h('wr_kind'),
    solicited: h('wr_solicited'), invalidate: h('wr_invalidate'), stag: h('wr_stag'), to: h('wr_to'), addr: h('wr_addr'), len: h('wr_len'),
    sinkStag: h('wr_sink_stag'), sinkTo: h('wr_sink_to'), imm: h('wr_imm'), aop: h('wr_aopcode'), addSwap: h('wr_add_swap'),
    addSwapMask: h('wr_add_swap_mask'), compare: h('wr_compare'), compareMask: h('wr_compare_mask'), requestId: h('wr_request_id'),
    rdReady: h('rd_ready'), rdDataValid: h('rd_data_valid'),
    tvalid: h('m_axis_tvalid'), tready: h('m_axis_tready'), tlast: h('m_axis_tlast'),
    sentValid: h('m_sent_valid'), idle: h('idle'),
  };
  const violations: string[] = [];
  const report = (s: string) => {
    if (violations.length < 50) violations.push(s);
  };

  model.pokeNumber(P.mulpdu, o.mulpdu);
  model.pokeNumber(P.msn, o.initialMsn >>> 0);
  for (const p of [P.valid, P.rdReady, P.rdDataValid, P.tready]) model.pokeNumber(p, 0);

  let cycle = 0;
  const acceptedAt: number[] = [];
  // Work requests: every field random but those of the request's kind; Atomics numbered from 1
  // as the model's Request Identifiers are (RFC 7306 §5.2.1: the requester picks them).
  let requestId = 1;
  const wr = new QueueSource<TxRequest>(model, P.valid, P.ready, (q) => {
    for (const p of [P.stag, P.to, P.addr, P.len, P.sinkStag, P.sinkTo, P.imm, P.addSwap, P.addSwapMask, P.compare, P.compareMask, P.requestId]) model.poke(p, r.bytes(p.octets));
    for (const p of [P.solicited, P.invalidate]) model.pokeNumber(p, r.int(0, 1));
    model.pokeNumber(P.aop, r.int(0, 15));
    model.pokeNumber(P.kind, WR_KIND[q.kind.toUpperCase() as keyof typeof WR_KIND]);
    switch (q.kind) {
      case 'write':
        model.pokeNumber(P.stag, q.stag >>> 0);
        model.poke(P.to, q.to);
        model.poke(P.addr, q.addr);
        model.pokeNumber(P.len, q.len);
        break;
      case 'send':
        model.pokeNumber(P.solicited, q.solicited ? 1 : 0);
        model.pokeNumber(P.invalidate, q.invalidate === null ? 0 : 1);
        if (q.invalidate !== null) model.pokeNumber(P.stag, q.invalidate >>> 0);
        model.poke(P.addr, q.addr);
        model.pokeNumber(P.len, q.len);
        break;
      case 'read':
        model.pokeNumber(P.stag, q.stag >>> 0);
        model.poke(P.to, q.to);
        model.pokeNumber(P.len, q.len >>> 0);
        model.pokeNumber(P.sinkStag, q.sinkStag >>> 0);
        model.poke(P.sinkTo, q.sinkTo);
        break;
      case 'immediate':
        model.pokeNumber(P.solicited, q.solicited ? 1 : 0);
        model.poke(P.imm, q.imm);
        break;
      case 'atomic':
        model.pokeNumber(P.aop, q.aopcode);
        model.pokeNumber(P.stag, q.stag >>> 0);
        model.poke(P.to, q.to);
        model.poke(P.addSwap, q.addSwap);
        model.poke(P.addSwapMask, q.addSwapMask);
        model.poke(P.compare, q.compare);
        model.poke(P.compareMask, q.compareMask);
        model.pokeNumber(P.requestId, requestId++);
        break;
    }
  });
  let next = 0;
  tb.add({
    drive() {
      // Offer the next request after a random gap.
      if (wr.idle && next < o.requests.length && !wrGap.next()) wr.queue.push(o.requests[next++]!);
      wr.drive();
    },
    sample() {
      const offered = !wr.idle;
      wr.sample();
      if (offered && wr.idle) acceptedAt.push(cycle);
    },
  });

  // Memory: reads answered in order after minLatency..maxLatency cycles.
  const ctx = { model, width: W, cycle: () => cycle, report };
  const rd = tb.add(new ReadPortResponder(ctx, r, { read: (a, n) => o.memory.read(a, n), pause: rdPause, minLatency: minLat, maxLatency: maxLat }));

  // The ULPDU stream; m_sent_valid only with a taken last beat.
  const sink = tb.sink('m_axis', { pause: pause(o.sinkPause) });
  const stream = tb.add(new UlpduStreamCheck(ctx));
  let sent = 0;
  tb.add({
    sample() {
      if (model.peekPreNumber(P.sentValid) !== 1) return;
      sent++;
      if (model.peekPreNumber(P.tvalid) !== 1 || model.peekPreNumber(P.tready) !== 1 || model.peekPreNumber(P.tlast) !== 1) report(`m_sent_valid without a taken last beat at cycle ${cycle}`);
    },
  });
  tb.add({ sample: () => void cycle++ });

  tb.reset();
  cycle = 0;
  const payload = (q: TxRequest) => (q.kind === 'write' || q.kind === 'send' ? q.len : 0);
  const budget = 2000 + o.requests.reduce((n, q) => n + payload(q) + 100, 0) * 4;
  try {
    tb.until(() => sent >= o.requests.length, budget, `${o.requests.length} work requests sent by ddp_tx_w${W}`);
  } catch (e) {
    report((e as Error).message);
  }
  tb.run(20); // anything extra shows up in the counts
  if (rd.inFlight) report(`${rd.inFlight} read(s) still pending at the end`);
  const idleAtEnd = model.peekNumber(P.idle) === 1;
  if (!o.model) tb.close();
  return { ulpdus: sink.drain().map((f) => f.data), violations, acceptedAt, lastBeatAt: stream.lastBeatAt, sent, idleAtEnd };
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
  const mismatches: UlpduMismatch[] = run.violations.map((v) => ({ what: 'protocol', index: -1, expected: 'no violation', actual: v }));
  if (!run.idleAtEnd) mismatches.push({ what: 'idle', index: -1, expected: '1 at the end', actual: '0' });
  if (run.sent !== requests.length) mismatches.push({ what: 'm_sent_valid pulses', index: -1, expected: String(requests.length), actual: String(run.sent) });
  mismatches.push(...ulpduMismatches(expected, run.ulpdus));
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
