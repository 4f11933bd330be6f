import { RESP_KIND } from '../../hdl-gen/blocks/rdmap-tx-resp';
import { DDP_VERSION, Qn, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { writeDdpHeader } from '../../ts-model/ddp/header';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import type { Endian } from '../../ts-model/memory/host-memory';
import { AOpCode, bytesToU64, cmpSwap, fetchAdd, u64ToBytes } from '../../ts-model/rdmap/atomics';
import { Opcode, READ_REQUEST_HEADER_SIZE, rdmapControl } from '../../ts-model/rdmap/constants';
import { encodeAtomicResponse, encodeTerminate } from '../../ts-model/rdmap/headers';
import { hex } from '../../ts-model/util/hex';
import { prng, type Prng } from '../../ts-model/util/prng';
import { random as randomPause } from '../cocotb/pause';
import { Testbench } from '../cocotb/testbench';
import type { SimModel } from '../verilator/model';
import { openDut, type DutOptions } from './dut';
import type { AtomicOp } from './atomic-unit';
import { ReadPortResponder, UlpduStreamCheck, ulpduMismatches, type UlpduMismatch } from './tx-ports';

/**
 * Co-simulation of rdmap_tx_resp_w<W> (hdl-gen/blocks/rdmap-tx-resp.ts) against the model's own
 * encoders, as ts-model/rnic/endpoint.ts uses them: `segmentMessage` for Read Responses,
 * fetchAdd / cmpSwap + `encodeAtomicResponse` on QN 3 for atomics, `writeDdpHeader` +
 * `encodeTerminate` on QN 2 for Terminates (`fail()`), run in request order on a mirror memory.
 *
 * Host memory: every octet has a fixed pseudo-random background value (a hash of its address);
 * 8-octet words written by atomics are kept in an overlay. Reads are answered in order, 1..maxLatency
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

// ---- host memory ---------------------------------------------------------------------------------

const MASK64 = (1n << 64n) - 1n;

/** The background octet at (hi:lo), a hash of the address. */
function background(lo: number, hi: number): number {
  let x = (lo ^ Math.imul(hi, 0x9e3779b1)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) & 0xff;
}

/** Host memory for the response tests: a hashed background (no storage, any address) plus the 8-octet words written since (keyed by their aligned address). */
export class BackgroundMemory {
  readonly words = new Map<bigint, Uint8Array>();

  clone(): BackgroundMemory {
    const c = new BackgroundMemory();
    for (const [a, w] of this.words) c.words.set(a, w.slice());
    return c;
  }

  read(addr: bigint, n: number): Uint8Array {
    const out = new Uint8Array(n);
    let lo = Number(addr & 0xffffffffn);
    let hi = Number((addr >> 32n) & 0xffffffffn);
    for (let i = 0; i < n; i++) {
      out[i] = background(lo, hi);
      if (++lo === 0x100000000) {
        lo = 0;
        hi = (hi + 1) >>> 0;
      }
    }
    const end = addr + BigInt(n);
    for (const [a, w] of this.words) {
      if (a + 8n <= addr || a >= end) continue;
      for (let k = 0; k < 8; k++) {
        const at = a + BigInt(k) - addr;
        if (at >= 0n && at < BigInt(n)) out[Number(at)] = w[k]!;
      }
    }
    return out;
  }

  write(addr: bigint, data: Uint8Array, strb: (k: number) => boolean): void {
    for (let k = 0; k < data.length; k++) {
      if (!strb(k)) continue;
      const a = (addr + BigInt(k)) & MASK64;
      const base = a & ~7n;
      const word = this.words.get(base) ?? this.read(base, 8);
      word[Number(a - base)] = data[k]!;
      this.words.set(base, word);
    }
  }
}

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

export interface RespRunOptions {
  readonly width: number;
  readonly requests: readonly RespRequest[];
  /** Mutated: the RTL's writes land here. */
  readonly memory: BackgroundMemory;
  readonly mulpdu: number;
  readonly bigEndian: boolean;
  readonly initialMsn: number;
  readonly seed: number;
  /** Per-cycle probabilities (default 0.3; 0 = full rate). */
  readonly reqGap?: number;
  readonly rdPause?: number;
  readonly wrPause?: number;
  readonly sinkPause?: number;
  /** Read latency, uniform in [minLatency, maxLatency] cycles after the handshake (default 1..6). */
  readonly minLatency?: number;
  readonly maxLatency?: number;
  /** An open model of rdmap_tx_resp_w<width> (reset first); otherwise one is opened and closed. */
  readonly model?: SimModel;
  readonly dut?: DutOptions;
}

export interface RespRun {
  readonly ulpdus: Uint8Array[];
  readonly violations: string[];
  /** Cycles from reset to the last beat. */
  readonly cycles: number;
  /** Cycle of each request handshake and of each ULPDU's last beat (for rate checks). */
  readonly acceptedAt: number[];
  readonly lastBeatAt: number[];
  readonly reads: number;
  readonly writes: number;
  readonly idleAtEnd: boolean;
}

const hasBit = (words: Uint32Array, offset: number, k: number): boolean => ((words[offset + (k >>> 5)]! >>> (k & 31)) & 1) === 1;

export function runRdmapTxResp(o: RespRunOptions): RespRun {
  const W = o.width;
  const model = o.model ?? openDut(`rdmap_tx_resp_w${W}`, o.dut).model;
  const tb = new Testbench(model);
  const r = prng(o.seed);
  const pause = (p: number | undefined) => randomPause(r.u32(), p ?? 0.3);
  const reqGap = pause(o.reqGap);
  const rdPause = pause(o.rdPause);
  const wrPause = pause(o.wrPause);
  const minLat = o.minLatency ?? 1;
  const maxLat = o.maxLatency ?? 6;
  const h = (n: string) => model.handle(n);
  const words = model.words;
  const P = {
    mulpdu: h('cfg_mulpdu'), be: h('cfg_big_endian'), msn: h('cfg_initial_msn'),
    reqValid: h('req_valid'), reqReady: h('req_ready'), kind: h('req_kind'),
    sinkStag: h('req_sink_stag'), sinkTo: h('req_sink_to'), srcAddr: h('req_src_addr'), size: h('req_size'),
    aop: h('req_aopcode'), addr: h('req_addr'), addSwap: h('req_add_swap'), addSwapMask: h('req_add_swap_mask'),
    compare: h('req_compare'), compareMask: h('req_compare_mask'), requestId: h('req_request_id'),
    layer: h('req_term_layer'), etype: h('req_term_etype'), code: h('req_term_code'), tm: h('req_term_m'), td: h('req_term_d'),
    tr: h('req_term_r'), segLen: h('req_term_seg_len'), tagged: h('req_term_tagged'), ddpHdr: h('req_term_ddp_hdr'), rdmaHdr: h('req_term_rdma_hdr'),
    rdReady: h('rd_ready'), rdDataValid: h('rd_data_valid'),
    wrValid: h('wr_valid'), wrReady: h('wr_ready'), wrAddr: h('wr_addr'), wrData: h('wr_data'), wrStrb: h('wr_strb'),
    tready: h('m_axis_tready'),
    idle: h('idle'),
  };
  const violations: string[] = [];
  const report = (s: string) => {
    if (violations.length < 50) violations.push(s);
  };
  const mem = o.memory;
  const Wn = BigInt(W);

  model.pokeNumber(P.mulpdu, o.mulpdu);
  model.pokeNumber(P.be, o.bigEndian ? 1 : 0);
  model.pokeNumber(P.msn, o.initialMsn >>> 0);
  for (const p of [P.reqValid, P.rdReady, P.rdDataValid, P.wrReady, P.tready]) model.pokeNumber(p, 0);

  let cycle = 0;
  const acceptedAt: number[] = [];
  // Requests: offered after a random gap, held until taken; fields of the other kinds random.
  let next = 0;
  let offering = false;
  tb.add({
    drive() {
      if (!offering && next < o.requests.length && !reqGap.next()) {
        const q = o.requests[next]!;
        const junk = (n: number) => r.bytes(n);
        model.pokeNumber(P.kind, q.kind === 'read' ? RESP_KIND.READ_RESPONSE : q.kind === 'atomic' ? RESP_KIND.ATOMIC : RESP_KIND.TERMINATE);
        for (const p of [P.sinkStag, P.sinkTo, P.srcAddr, P.size, P.addr, P.addSwap, P.addSwapMask, P.compare, P.compareMask, P.requestId, P.segLen, P.ddpHdr, P.rdmaHdr]) model.poke(p, junk(p.octets));
        model.pokeNumber(P.aop, r.int(0, 15));
        for (const p of [P.layer, P.etype]) model.pokeNumber(p, r.int(0, 15));
        model.pokeNumber(P.code, r.int(0, 255));
        for (const p of [P.tm, P.td, P.tr, P.tagged]) model.pokeNumber(p, r.int(0, 1));
        if (q.kind === 'read') {
          model.pokeNumber(P.sinkStag, q.sinkStag >>> 0);
          model.poke(P.sinkTo, q.sinkTo);
          model.poke(P.srcAddr, q.srcAddr);
          model.pokeNumber(P.size, q.size);
        } else if (q.kind === 'atomic') {
          model.pokeNumber(P.aop, q.aopcode);
          model.poke(P.addr, q.addr);
          model.poke(P.addSwap, q.addSwap);
          model.poke(P.addSwapMask, q.addSwapMask);
          model.poke(P.compare, q.compare);
          model.poke(P.compareMask, q.compareMask);
          model.pokeNumber(P.requestId, q.requestId >>> 0);
        } else {
          model.pokeNumber(P.layer, q.layer);
          model.pokeNumber(P.etype, q.etype);
          model.pokeNumber(P.code, q.code);
          model.pokeNumber(P.tm, q.m ? 1 : 0);
          model.pokeNumber(P.td, q.d ? 1 : 0);
          model.pokeNumber(P.tr, q.r ? 1 : 0);
          model.pokeNumber(P.tagged, q.tagged ? 1 : 0);
          model.pokeNumber(P.segLen, q.segLen);
          model.poke(P.ddpHdr, q.ddpHeader);
          model.poke(P.rdmaHdr, q.rdmaHeader);
        }
        offering = true;
      }
      model.pokeNumber(P.reqValid, offering ? 1 : 0);
    },
    sample() {
      if (offering && model.peekPreNumber(P.reqReady) === 1) {
        offering = false;
        next++;
        acceptedAt.push(cycle);
      }
    },
  });

  // Memory: reads answered in order after 1..maxLatency cycles; writes applied at the handshake.
  const ctx = { model, width: W, cycle: () => cycle, report };
  const rd = tb.add(new ReadPortResponder(ctx, r, { read: (a, n) => mem.read(a, n), pause: rdPause, minLatency: minLat, maxLatency: maxLat }));
  let writes = 0;
  tb.add({
    drive() {
      model.pokeNumber(P.wrReady, wrPause.next() ? 0 : 1);
    },
    sample() {
      if (model.peekPreNumber(P.wrValid) === 1 && model.peekPreNumber(P.wrReady) === 1) {
        const addr = model.peekPre(P.wrAddr);
        if (addr % Wn !== 0n) report(`write to unaligned 0x${addr.toString(16)} at cycle ${cycle}`);
        const strb = P.wrStrb.preOffset;
        mem.write(addr, model.peekPreBytes(P.wrData), (k) => hasBit(words, strb, k));
        writes++;
      }
    },
  });

  // The ULPDU stream.
  const sink = tb.sink('m_axis', { pause: pause(o.sinkPause) });
  const stream = tb.add(new UlpduStreamCheck(ctx));
  tb.add({ sample: () => void cycle++ });

  tb.reset();
  cycle = 0;
  const expectedCount = o.requests.reduce((n, q) => n + (q.kind === 'read' ? Math.max(1, Math.ceil(q.size / (o.mulpdu - 14))) : 1), 0);
  const budget = 2000 + o.requests.reduce((n, q) => n + (q.kind === 'read' ? q.size : 100), 0) * 4;
  try {
    tb.until(() => sink.receivedCount >= expectedCount && next >= o.requests.length, budget, `${expectedCount} ULPDUs from rdmap_tx_resp_w${W}`);
  } catch (e) {
    report((e as Error).message);
  }
  const cycles = cycle;
  tb.run(20); // anything extra shows up in the count
  if (rd.inFlight) report(`${rd.inFlight} read(s) still pending at the end`);
  const idleAtEnd = model.peekNumber(P.idle) === 1;
  if (!o.model) tb.close();
  return { ulpdus: sink.drain().map((f) => f.data), violations, cycles, acceptedAt, lastBeatAt: stream.lastBeatAt, reads: rd.reads, writes, idleAtEnd };
}

// ---- the random co-simulation ---------------------------------------------------------------------

export interface RespCosimOptions {
  readonly width: number;
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
    width: W, requests, memory, mulpdu: o.mulpdu, bigEndian: o.bigEndian ?? false, initialMsn, seed: r.u32(),
    reqGap: p, rdPause: p, wrPause: p, sinkPause: p,
    ...(o.model && { model: o.model }),
    ...(o.dut && { dut: o.dut }),
  });
  const mismatches: RespMismatch[] = run.violations.map((v) => ({ what: 'protocol', index: -1, expected: 'no violation', actual: v }));
  if (!run.idleAtEnd) mismatches.push({ what: 'idle', index: -1, expected: '1 at the end', actual: '0' });
  mismatches.push(...ulpduMismatches(expected, run.ulpdus));
  const addrs = new Set([...mirror.words.keys(), ...memory.words.keys()]);
  for (const a of addrs) {
    const e = hex(mirror.read(a, 8));
    const g = hex(memory.read(a, 8));
    if (e !== g) mismatches.push({ what: `final memory 0x${a.toString(16)}`, index: -1, expected: e, actual: g });
  }
  const reads = requests.filter((q) => q.kind === 'read');
  const atomics = requests.filter((q) => q.kind === 'atomic').length;
  const terminates = requests.filter((q) => q.kind === 'terminate').length;
  return {
    module: `rdmap_tx_resp_w${W}`,
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
