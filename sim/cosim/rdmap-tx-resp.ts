import { RESP_KIND, rdmapTxRespName } from '../../hdl-gen/blocks/rdmap-tx-resp';
import { DDP_VERSION, Qn, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { writeDdpHeader } from '../../ts-model/ddp/header';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import type { Endian } from '../../ts-model/memory/host-memory';
import { AOpCode, bytesToU64, cmpSwap, fetchAdd, u64ToBytes } from '../../ts-model/rdmap/atomics';
import { Opcode, READ_REQUEST_HEADER_SIZE, rdmapControl } from '../../ts-model/rdmap/constants';
import { encodeAtomicResponse, encodeTerminate } from '../../ts-model/rdmap/headers';
import { hex } from '../../ts-model/util/hex';
import { prng, type Prng } from '../../ts-model/util/prng';
import type { Fields } from '../cocotb/record-group';
import type { RecordSource } from '../cocotb/record-source';
import type { SimModel } from '../verilator/model';
import type { HostMemoryPort } from '../harness/host-memory-port';
import { BackgroundMemory } from '../harness/memory';
import { openDut, type DutOptions } from '../harness/open-dut';
import type { AtomicOp } from './atomic-unit';
import { TxBlockBench, type TxBlockRunOptions, type TxRunEnd } from './tx-bench';
import { txMismatches, type UlpduMismatch } from './tx-ports';

/**
 * Co-simulation of rdmap_tx_resp_w<W> (hdl-gen/blocks/rdmap-tx-resp.ts) against the model's own
 * encoders, as ts-model/rnic/endpoint.ts uses them: `segmentMessage` for Read Responses,
 * fetchAdd / cmpSwap + `encodeAtomicResponse` on QN 3 for atomics, `writeDdpHeader` +
 * `encodeTerminate` on QN 2 for Terminates (`fail()`), run in request order on a mirror memory.
 *
 * Host memory: a `BackgroundMemory` (sim/harness/memory.ts): every octet has a fixed pseudo-random
 * value (a hash of its address); 8-octet words written by atomics are kept in an overlay. Reads are answered in order, 1..maxLatency
 * cycles after their handshake; writes land at their handshake with their strobes. Every ULPDU is
 * compared octet for octet, then the final memory; every read and write address must be a
 * multiple of W, m_axis beats full but the last (tkeep 2^k − 1 there, k ≥ 1), and rd_valid /
 * m_axis_tvalid with their payload held until taken.
 */

export type RespRequest =
  | { readonly kind: 'read'; readonly sinkStag: number; readonly sinkTo: bigint; readonly srcAddr: bigint; readonly size: number }
  | ({ readonly kind: 'atomic'; readonly requestId: number } & Omit<AtomicOp, 'tag'>)
  | {
      readonly kind: 'terminate';
      readonly layer: number;
      readonly etype: number;
      readonly code: number;
      readonly m: boolean;
      readonly d: boolean;
      readonly r: boolean;
      readonly segLen: number;
      readonly tagged: boolean;
      /** 18 octets (the first 14 are copied when tagged). */
      readonly ddpHeader: Uint8Array;
      /** 28 octets. */
      readonly rdmaHeader: Uint8Array;
    };

const MASK64 = (1n << 64n) - 1n;

// ---- the reference -------------------------------------------------------------------------------

/** The ULPDUs the responder must send for `reqs`, in order, applying atomics to `memory`. */
export function expectedUlpdus(reqs: readonly RespRequest[], memory: BackgroundMemory, o: { mulpdu: number; endian: Endian; initialMsn: number }): Uint8Array[] {
  const out: Uint8Array[] = [];
  const msn = { [Qn.TERMINATE]: o.initialMsn >>> 0, [Qn.ATOMIC_RESPONSE]: o.initialMsn >>> 0 } as Record<number, number>;
  const nextMsn = (qn: number) => {
    const v = msn[qn]!;
    msn[qn] = (v + 1) >>> 0;
    return v;
  };
  for (const q of reqs) {
    if (q.kind === 'read') {
      const payload = memory.read(q.srcAddr, q.size);
      out.push(...segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag: q.sinkStag, to: q.sinkTo, payload }, o.mulpdu));
    } else if (q.kind === 'atomic') {
      // answerRequests(): read, compute, write back, respond with the original value.
      const orig = bytesToU64(memory.read(q.addr, 8), o.endian);
      const value = q.aopcode === AOpCode.FETCH_ADD ? fetchAdd(orig, q.addSwap, q.addSwapMask) : cmpSwap(orig, q.compare, q.compareMask, q.addSwap, q.addSwapMask).value;
      memory.write(q.addr, u64ToBytes(value, o.endian), () => true);
      const msg = { tagged: false as const, rsvdUlp: rdmapControl(Opcode.ATOMIC_RESPONSE), rsvdUlp2: 0, qn: Qn.ATOMIC_RESPONSE, msn: nextMsn(Qn.ATOMIC_RESPONSE) };
      out.push(...segmentMessage({ ...msg, payload: encodeAtomicResponse({ requestId: q.requestId, value: orig }) }, o.mulpdu));
    } else {
      // fail(): the untagged header of QN 2 and encodeTerminate.
      const term = encodeTerminate({
        layer: q.layer,
        etype: q.etype,
        code: q.code,
        m: q.m,
        d: q.d,
        r: q.r,
        segmentLength: q.segLen,
        ddpHeader: q.d ? q.ddpHeader.slice(0, q.tagged ? 14 : 18) : null,
        rdmaHeader: q.r ? q.rdmaHeader : null,
      });
      const ulpdu = new Uint8Array(UNTAGGED_HEADER_SIZE + term.length);
      writeDdpHeader(ulpdu, 0, { tagged: false, last: true, dv: DDP_VERSION, rsvdUlp: rdmapControl(Opcode.TERMINATE), rsvdUlp2: 0, qn: Qn.TERMINATE, msn: nextMsn(Qn.TERMINATE), mo: 0 });
      ulpdu.set(term, UNTAGGED_HEADER_SIZE);
      out.push(ulpdu);
    }
  }
  return out;
}

// ---- random workloads ------------------------------------------------------------------------------

export interface RespMix {
  /** Largest Read size (default 20000). */
  readonly maxReadSize?: number;
  /** Share of Reads / Atomics (the rest Terminates); default 0.5 / 0.3. */
  readonly reads?: number;
  readonly atomics?: number;
}

/**
 * Random requests: Reads of 0..maxReadSize octets (small, around a segment or W, and large) from
 * unaligned addresses, some near atomic targets; FetchAdd / CmpSwap (hits and misses) on a few
 * aligned words; Terminates cycling through every M/D/R/tagged combination.
 */
export function randomRequests(r: Prng, n: number, mulpdu: number, W: number, mix: RespMix = {}): RespRequest[] {
  const maxSize = mix.maxReadSize ?? 20000;
  const pRead = mix.reads ?? 0.5;
  const pAtomic = mix.atomics ?? 0.3;
  const targets = Array.from({ length: 6 }, () => (r.u64() & ~7n & ((1n << 63n) - 1n)));
  let termCombo = r.int(0, 15);
  const room = mulpdu - 14;
  const out: RespRequest[] = [];
  for (let i = 0; i < n; i++) {
    const x = r.int(0, 999) / 1000;
    if (x < pRead) {
      const size = r.pick([0, 1, r.int(1, 3 * W), r.int(0, 200), room, room + 1, room - 1, 2 * room + r.int(-W, W), r.int(0, maxSize), r.int(0, maxSize)]);
      const srcAddr = r.bool(0.15) ? (r.pick(targets) + BigInt(r.int(-40, 40))) & MASK64 : r.u64() & ((1n << 62n) - 1n);
      out.push({ kind: 'read', sinkStag: r.u32(), sinkTo: r.bool(0.1) ? MASK64 - BigInt(r.int(0, 3 * room)) : r.u64(), srcAddr, size: Math.max(0, Math.min(size, maxSize)) });
    } else if (x < pRead + pAtomic) {
      const cmp = r.bool();
      out.push({
        kind: 'atomic',
        aopcode: cmp ? AOpCode.CMP_SWAP : AOpCode.FETCH_ADD,
        addr: r.pick(targets),
        addSwap: r.pick([1n, MASK64, r.u64()]),
        addSwapMask: r.pick([0n, 0n, 0x8080808080808080n, r.u64()]),
        compare: r.u64(),
        compareMask: r.pick([0n, 0n, r.u64()]), // 0 matches everything: hits and misses
        requestId: r.u32(),
      });
    } else {
      termCombo = (termCombo + 1) & 15;
      out.push({
        kind: 'terminate',
        layer: r.int(0, 15),
        etype: r.int(0, 15),
        code: r.int(0, 255),
        m: (termCombo & 1) !== 0,
        d: (termCombo & 2) !== 0,
        r: (termCombo & 4) !== 0,
        tagged: (termCombo & 8) !== 0,
        segLen: r.int(0, 0xffff),
        ddpHeader: r.bytes(18),
        rdmaHeader: r.bytes(READ_REQUEST_HEADER_SIZE),
      });
    }
  }
  return out;
}

// ---- one run of the RTL ------------------------------------------------------------------------------

export interface RespRunOptions extends TxBlockRunOptions<RespRequest> {
  readonly bigEndian: boolean;
  /** The block's QPs (rdmap_tx_resp_w<W>_q<N>; default 1): the requests are QP 0's. */
  readonly qps?: number;
  /** Per-cycle probabilities of no request offered and of wr_ready low (default 0.3). */
  readonly reqGap?: number;
  readonly wrPause?: number;
}

export interface RespRun extends TxRunEnd {
  /** Cycles from reset to the last beat. */
  readonly cycles: number;
  readonly reads: number;
  readonly writes: number;
}

/** The fields a request kind does not use, in the order noise is drawn for them. */
const REQ_NOISE_FIELDS = ['sinkStag', 'sinkTo', 'srcAddr', 'size', 'addr', 'addSwap', 'addSwapMask', 'compare', 'compareMask', 'requestId', 'termSegLen', 'termDdpHdr', 'termRdmaHdr'] as const;

/** The request port's fields (req_*, hdl-gen/blocks/rdmap-tx-resp.ts) for `q`. */
function reqFields(q: RespRequest): Fields {
  switch (q.kind) {
    case 'read':
      return { kind: RESP_KIND.READ_RESPONSE, sinkStag: q.sinkStag >>> 0, sinkTo: q.sinkTo, srcAddr: q.srcAddr, size: q.size };
    case 'atomic':
      return { kind: RESP_KIND.ATOMIC, aopcode: q.aopcode, addr: q.addr, addSwap: q.addSwap, addSwapMask: q.addSwapMask, compare: q.compare, compareMask: q.compareMask, requestId: q.requestId >>> 0 };
    case 'terminate':
      return {
        kind: RESP_KIND.TERMINATE, termLayer: q.layer, termEtype: q.etype, termCode: q.code, termM: q.m, termD: q.d, termR: q.r,
        termTagged: q.tagged, termSegLen: q.segLen, termDdpHdr: q.ddpHeader, termRdmaHdr: q.rdmaHeader,
      };
  }
}

/**
 * The fixture of rdmap_tx_resp_w<W>: requests on req_* after random gaps (fields of the other
 * kinds random), both memory ports on a background memory (atomics write back), the ULPDU stream
 * on m_axis with its check.
 */
class RespBench extends TxBlockBench {
  readonly req: RecordSource<RespRequest>;
  readonly mem: HostMemoryPort;
  /** Each request's MSN: QN 3 counts the Atomic Responses, QN 2 the Terminates (ddp_rx_ctl assigns them). */
  private readonly msnOf = new Map<RespRequest, number>();
  private readonly nextMsn: Record<'atomic' | 'terminate', number>;

  constructor(model: SimModel, o: RespRunOptions) {
    super(model, o.seed);
    const r = this.r;
    const reqGap = this.pause(o.reqGap ?? 0.3);
    const rdPause = this.pause(o.rdPause ?? 0.3);
    const wrPause = this.pause(o.wrPause ?? 0.3);
    this.req = this.recordSource('req', {
      gap: reqGap,
      filler: () => ({
        ...this.req.group.random(r, REQ_NOISE_FIELDS),
        aopcode: r.int(0, 15), termLayer: r.int(0, 15), termEtype: r.int(0, 15), termCode: r.int(0, 255),
        termM: r.int(0, 1), termD: r.int(0, 1), termR: r.int(0, 1), termTagged: r.int(0, 1),
      }),
      // The responder keeps no per-QP state: the QP's MULPDU, byte order and the MSN come with each request.
      fields: (q) => ({ ...reqFields(q), qp: 0, mulpdu: o.mulpdu, bigEndian: o.bigEndian ? 1 : 0, msn: this.msnOf.get(q) ?? 0 }),
      onAccept: () => this.acceptedAt.push(this.stepped),
    });
    this.mem = this.memory({ width: o.width, prefix: '', memory: o.memory, rdPause, wrPause, latency: { min: o.minLatency ?? 1, max: o.maxLatency ?? 6 }, report: this.report });
    this.ulpduStream(o.width, o.sinkPause);
    this.nextMsn = { atomic: o.initialMsn >>> 0, terminate: o.initialMsn >>> 0 };
    this.quiet(['req_valid', 'rd_ready', 'rd_data_valid', 'wr_ready', 'm_axis_tready']);
  }

  /** Queues `requests` on req_*, in order, each with its MSN. */
  push(requests: readonly RespRequest[]): void {
    for (const q of requests) {
      if (q.kind === 'read') continue;
      this.msnOf.set(q, this.nextMsn[q.kind]);
      this.nextMsn[q.kind] = (this.nextMsn[q.kind] + 1) >>> 0;
    }
    this.req.pushAll(requests);
  }
}

export function runRdmapTxResp(o: RespRunOptions): RespRun {
  const W = o.width;
  const tb = new RespBench(o.model ?? openDut(rdmapTxRespName(W, o.qps ?? 1), o.dut).model, o);
  tb.push(o.requests);
  const expectedCount = o.requests.reduce((n, q) => n + (q.kind === 'read' ? Math.max(1, Math.ceil(q.size / (o.mulpdu - 14))) : 1), 0);
  const budget = 2000 + o.requests.reduce((n, q) => n + (q.kind === 'read' ? q.size : 100), 0) * 4;
  const { stepped, ...end } = tb.finish(() => tb.mAxis.receivedCount >= expectedCount && tb.req.idle, budget, `${expectedCount} ULPDUs from rdmap_tx_resp_w${W}`, o.model !== undefined);
  return { ...end, cycles: stepped, reads: tb.mem.reader!.reads, writes: tb.mem.writes.length };
}

// ---- the random co-simulation ---------------------------------------------------------------------

export interface RespCosimOptions {
  readonly width: number;
  /** The block's QPs (default 1; rnic_top's responder serves max(qps, 2)). */
  readonly qps?: number;
  readonly seed: number;
  readonly requests: number;
  readonly mulpdu: number;
  readonly bigEndian?: boolean;
  readonly initialMsn?: number;
  /** Per-cycle probability of a request gap and of rd / wr / m_axis back-pressure (default 0.3). */
  readonly pause?: number;
  readonly mix?: RespMix;
  readonly model?: SimModel;
  readonly dut?: DutOptions;
}

export type RespMismatch = UlpduMismatch;

export interface RespCosimResult {
  readonly module: string;
  readonly seed: number;
  readonly ulpdus: number;
  readonly mismatches: number;
  readonly firstMismatch?: RespMismatch;
  readonly cycles: number;
  readonly coverage: { readonly reads: number; readonly readOctets: number; readonly segments: number; readonly atomics: number; readonly terminates: number; readonly msnWrapped: boolean };
}

export function cosimRdmapTxResp(o: RespCosimOptions): RespCosimResult {
  const r = prng(o.seed);
  const W = o.width;
  const requests = randomRequests(r, o.requests, o.mulpdu, W, o.mix);
  const memory = new BackgroundMemory();
  const endian: Endian = o.bigEndian ? 'big' : 'little';
  const initialMsn = o.initialMsn ?? (0xffffffff - r.int(0, 5)) >>> 0;
  const mirror = memory.clone();
  const expected = expectedUlpdus(requests, mirror, { mulpdu: o.mulpdu, endian, initialMsn });
  const p = o.pause ?? 0.3;
  const run = runRdmapTxResp({
    width: W, requests, memory, mulpdu: o.mulpdu, bigEndian: o.bigEndian ?? false, initialMsn, seed: r.u32(), ...(o.qps && { qps: o.qps }),
    reqGap: p, rdPause: p, wrPause: p, sinkPause: p,
    ...(o.model && { model: o.model }),
    ...(o.dut && { dut: o.dut }),
  });
  const mismatches: RespMismatch[] = txMismatches(run, expected);
  const addrs = new Set([...mirror.words.keys(), ...memory.words.keys()]);
  for (const a of addrs) {
    const e = hex(mirror.read(a, 8));
    const g = hex(memory.read(a, 8));
    if (e !== g) mismatches.push({ what: `final memory 0x${a.toString(16)}`, index: -1, cycle: run.endCycle, expected: e, actual: g });
  }
  const reads = requests.filter((q) => q.kind === 'read');
  const atomics = requests.filter((q) => q.kind === 'atomic').length;
  const terminates = requests.filter((q) => q.kind === 'terminate').length;
  return {
    module: rdmapTxRespName(W, o.qps ?? 1),
    seed: o.seed,
    ulpdus: expected.length,
    mismatches: mismatches.length,
    ...(mismatches[0] && { firstMismatch: mismatches[0] }),
    cycles: run.cycles,
    coverage: {
      reads: reads.length,
      readOctets: reads.reduce((n, q) => n + q.size, 0),
      segments: expected.length - atomics - terminates,
      atomics,
      terminates,
      msnWrapped: initialMsn + Math.max(atomics, terminates) > 0xffffffff,
    },
  };
}
