import type { Endian } from '../../ts-model/memory/host-memory';
import { AOpCode, MASK64, bytesToU64, cmpSwap, fetchAdd, isAligned64, u64ToBytes } from '../../ts-model/rdmap/atomics';
import { prng, type Prng } from '../../ts-model/util/prng';
import type { RecordSink } from '../cocotb/record-sink';
import type { RecordSource } from '../cocotb/record-source';
import type { SimModel } from '../verilator/model';
import { DutBench } from '../harness/dut-bench';
import { HostMemoryPort } from '../harness/host-memory-port';
import type { Memory } from '../harness/memory';
import { dutSelection, openDut, type DutOptions, type DutSelection } from '../harness/open-dut';
import { hex } from '../../ts-model/util/hex';

/**
 * Co-simulation of atomic_unit (hdl-gen/blocks/atomic-unit.ts) against ts-model/rdmap/atomics.ts.
 *
 * A TypeScript memory of 8-octet words (memory order) answers reads after a random latency
 * (0..maxLatency cycles after the read handshake; 0 = in the handshake cycle) and applies writes at
 * their handshake; rd/wr/rsp back-pressure and request gaps are random. Every response (tag,
 * orig, status, match), the sequence of read and write addresses and data, and the final memory
 * are compared with the model run on a mirrored memory in the same order. Protocol checks: no
 * read or write ever goes to a misaligned address, a read is never issued before the previous
 * operation's write-back was accepted and its read data returned (serialization), and valid and
 * payload hold while a handshake is pending.
 */

export interface AtomicOp {
  readonly aopcode: number;
  readonly addr: bigint;
  /** Add Data (FetchAdd) / Swap Data (CmpSwap). */
  readonly addSwap: bigint;
  /** Add Mask / Swap Mask. */
  readonly addSwapMask: bigint;
  readonly compare: bigint;
  readonly compareMask: bigint;
  readonly tag: number;
}

export interface AtomicRsp {
  readonly tag: number;
  readonly orig: bigint;
  readonly status: number;
  readonly match: boolean;
}

export interface AtomicWrite {
  readonly addr: bigint;
  /** The 8 octets in memory order. */
  readonly data: string;
  readonly strb: number;
}

/** 8-octet words in memory order, keyed by their (aligned) address; missing words read as zero. */
export type WordMemory = Map<bigint, Uint8Array>;

export const STATUS = Object.freeze({ OK: 0, MISALIGNED: 1, UNSUPPORTED: 2 });

const h64 = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;

/** Builds (or reuses) the Verilated atomic_unit and opens a fresh instance. */
export function openAtomicUnit(opts: DutOptions = {}): SimModel {
  return openDut('atomic_unit', opts).model;
}

// ---- the reference: the model on a mirrored memory ------------------------------------------------

export interface AtomicExpected {
  readonly responses: AtomicRsp[];
  readonly reads: bigint[];
  readonly writes: AtomicWrite[];
  /** For each read (in order): how many writes precede it. */
  readonly writesBeforeRead: number[];
  readonly memory: WordMemory;
}

function readWord(mem: WordMemory, addr: bigint): Uint8Array {
  return mem.get(addr) ?? new Uint8Array(8);
}

/** What the unit must do: the golden model applied to a copy of `memory`, in order. */
export function expectAtomics(ops: readonly AtomicOp[], memory: WordMemory, endian: Endian): AtomicExpected {
  const mem: WordMemory = new Map([...memory].map(([a, w]) => [a, w.slice()]));
  const responses: AtomicRsp[] = [];
  const reads: bigint[] = [];
  const writes: AtomicWrite[] = [];
  const writesBeforeRead: number[] = [];
  for (const op of ops) {
    if (op.aopcode !== AOpCode.FETCH_ADD && op.aopcode !== AOpCode.CMP_SWAP) {
      responses.push({ tag: op.tag, orig: 0n, status: STATUS.UNSUPPORTED, match: false });
      continue;
    }
    if (!isAligned64(op.addr)) {
      responses.push({ tag: op.tag, orig: 0n, status: STATUS.MISALIGNED, match: false });
      continue;
    }
    writesBeforeRead.push(writes.length);
    reads.push(op.addr);
    const orig = bytesToU64(readWord(mem, op.addr), endian);
    let value: bigint | null;
    let match = false;
    if (op.aopcode === AOpCode.FETCH_ADD) value = fetchAdd(orig, op.addSwap, op.addSwapMask);
    else {
      const r = cmpSwap(orig, op.compare, op.compareMask, op.addSwap, op.addSwapMask);
      match = r.match;
      value = r.match ? r.value : null;
    }
    if (value !== null) {
      const bytes = u64ToBytes(value, endian);
      mem.set(op.addr, bytes);
      writes.push({ addr: op.addr, data: hex(bytes), strb: 0xff });
    }
    responses.push({ tag: op.tag, orig, status: STATUS.OK, match });
  }
  return { responses, reads, writes, writesBeforeRead, memory: mem };
}

// ---- one run of the RTL -----------------------------------------------------------------------------

export interface AtomicRunOptions {
  readonly ops: readonly AtomicOp[];
  /** Mutated: the RTL's writes land here. */
  readonly memory: WordMemory;
  readonly bigEndian: boolean;
  readonly seed: number;
  /** Per-cycle probabilities (default 0.3 each; 0 = full rate). */
  readonly reqGap?: number;
  readonly rdPause?: number;
  readonly wrPause?: number;
  readonly rspPause?: number;
  /** Read latency 0..maxLatency cycles after the read handshake (default 5). */
  readonly maxLatency?: number;
  /** Use this open model (it is reset first); otherwise one is opened, and closed at the end. */
  readonly model?: SimModel;
  /** Close `model` at the end too (default: only a model this call opened). */
  readonly closeModel?: boolean;
  readonly vcd?: string;
}

export interface AtomicRun {
  readonly responses: AtomicRsp[];
  readonly reads: bigint[];
  readonly writes: AtomicWrite[];
  /** Protocol violations seen by the monitors (misaligned access, serialization, stability). */
  readonly violations: string[];
  /** The model's cycle count at each response, read and write handshake, and each violation. */
  readonly responseAt: number[];
  readonly readAt: number[];
  readonly writeAt: number[];
  readonly violationAt: number[];
  /** The model's cycle count at the end of the run. */
  readonly endCycle: number;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
}

/** 8-octet words keyed by their aligned address, as the memory ports see them. */
function wordMemory(mem: WordMemory): Memory {
  return {
    read: (addr, n) => readWord(mem, addr).slice(0, n),
    write: (addr, data) => {
      data.forEach((octet, i) => {
        const a = addr + BigInt(i);
        const base = a & ~7n;
        const word = readWord(mem, base).slice();
        word[Number(a - base)] = octet;
        mem.set(base, word);
      });
    },
  };
}

/**
 * The fixture of atomic_unit: requests on req_* after random gaps, held until taken; its memory
 * ports on a word memory (reads answered 0..maxLatency cycles after the handshake, rd_valid and
 * rd_addr being registers; writes applied at theirs), responses on rsp_*; every port with random
 * back-pressure and the valid/payload stability checked. The serialization the unit promises is
 * checked at every read: the previous operation's write-back accepted, its read data returned.
 */
class AtomicBench extends DutBench {
  readonly req: RecordSource<AtomicOp>;
  readonly mem: HostMemoryPort;
  readonly rsp: RecordSink<AtomicRsp & { readonly cycle: number }>;
  readonly reads: bigint[] = [];
  readonly readAt: number[] = [];
  readonly writes: AtomicWrite[] = [];
  readonly writeAt: number[] = [];

  constructor(model: SimModel, opts: AtomicRunOptions, expected: AtomicExpected, report: (s: string) => void) {
    super(model, opts.seed);
    const reqGap = this.pause(opts.reqGap ?? 0.3);
    const rdPause = this.pause(opts.rdPause ?? 0.3);
    const wrPause = this.pause(opts.wrPause ?? 0.3);
    const rspPause = this.pause(opts.rspPause ?? 0.3);
    this.req = this.recordSource<AtomicOp>('req', { gap: reqGap, fields: (op) => ({ ...op, tag: op.tag >>> 0 }) });
    this.mem = new HostMemoryPort(model, this.r, {
      width: 8,
      prefix: '',
      memory: wordMemory(opts.memory),
      rdPause,
      wrPause,
      latency: { min: 0, max: opts.maxLatency ?? 5 },
      registered: true,
      report,
      onWrite: (w, data) => {
        this.writes.push({ addr: w.addr, data: hex(data), strb: Number(w.strb) });
        this.writeAt.push(w.cycle);
      },
    });
    const h = (n: string) => model.handle(n);
    const [rdValid, rdReady, rdAddr] = [h('rd_valid'), h('rd_ready'), h('rd_addr')];
    // Before the memory port samples this cycle's write: a read in the cycle the write-back is
    // accepted comes too early.
    this.add({
      sample: () => {
        if (model.peekPreNumber(rdValid) !== 1 || model.peekPreNumber(rdReady) !== 1) return;
        const addr = model.peekPre(rdAddr);
        const i = this.reads.length;
        this.reads.push(addr);
        this.readAt.push(model.cycles);
        const before = expected.writesBeforeRead[i];
        if (before !== undefined && this.writes.length < before) report(`read ${i} (${h64(addr)}) issued before the previous write-back was accepted, at cycle ${model.cycles}`);
        if (this.mem.reader!.inFlight > 1) report(`read ${i} issued before the previous read data returned, at cycle ${model.cycles}`);
      },
    });
    this.add(this.mem);
    this.rsp = this.recordSink('rsp', {
      pause: rspPause,
      stable: report,
      map: (f, cycle) => ({ tag: f.tag as number, orig: f.orig as bigint, status: f.status as number, match: f.match === 1, cycle }),
    });
  }
}

export function runAtomicUnit(opts: AtomicRunOptions): AtomicRun {
  const model = opts.model ?? openAtomicUnit(opts.vcd !== undefined ? { vcd: opts.vcd } : {});
  const ops = opts.ops;
  const expected = expectAtomics(ops, opts.memory, opts.bigEndian ? 'big' : 'little');
  const violations: string[] = [];
  const violationAt: number[] = [];
  const report = (s: string) => {
    if (violations.length >= 50) return;
    violations.push(s);
    violationAt.push(model.cycles);
  };
  const tb = new AtomicBench(model, opts, expected, report);
  tb.req.pushAll(ops);
  tb.inputs('cfg').poke({ bigEndian: opts.bigEndian });
  // A model used before holds its last inputs: nothing offered, nothing accepted, during reset.
  for (const n of ['req_valid', 'rd_ready', 'rd_data_valid', 'wr_ready', 'rsp_ready']) model.pokeNumber(model.handle(n), 0);

  tb.reset();
  const timer = tb.timer();
  const rsp = tb.rsp.records;
  try {
    tb.until(() => rsp.length >= ops.length, 200 + ops.length * 200, `${ops.length} atomic responses`);
    // A little longer: nothing more may come out.
    tb.run(20);
  } finally {
    if (!opts.model || opts.closeModel) tb.close();
  }
  const time = timer.stop();
  if (tb.mem.reader!.inFlight > 0) report(`${tb.mem.reader!.inFlight} read(s) still pending at the end`);
  return {
    responses: rsp.map(({ tag, orig, status, match }) => ({ tag, orig, status, match })),
    reads: tb.reads,
    writes: tb.writes,
    violations,
    responseAt: rsp.map((x) => x.cycle),
    readAt: tb.readAt,
    writeAt: tb.writeAt,
    violationAt,
    endCycle: model.cycles,
    cycles: time.cycles,
    simCyclesPerSecond: time.simCyclesPerSecond,
  };
}

// ---- comparison -----------------------------------------------------------------------------------

export interface AtomicMismatch {
  readonly what: string;
  readonly index: number;
  /**
   * The cycle of the difference: of the violation, or the response, read or write that differs;
   * for one the RTL never made, the end of the run; for the final memory, the last write there.
   */
  readonly cycle: number;
  readonly expected: string;
  readonly actual: string;
  readonly op?: string;
}

const showRsp = (r: AtomicRsp | undefined): string => (r ? `tag ${r.tag} orig ${h64(r.orig)} status ${r.status} match ${r.match}` : 'none');
const showOp = (o: AtomicOp): string =>
  `aop ${o.aopcode} addr ${h64(o.addr)} add/swap ${h64(o.addSwap)} mask ${h64(o.addSwapMask)} cmp ${h64(o.compare)} cmask ${h64(o.compareMask)} tag ${o.tag}`;

/** Every difference between a run and the expectation (responses, reads, writes, final memory). */
export function compareAtomics(ops: readonly AtomicOp[], exp: AtomicExpected, run: AtomicRun, memory: WordMemory): AtomicMismatch[] {
  const out: AtomicMismatch[] = [];
  const end = run.endCycle;
  run.violations.forEach((v, i) => out.push({ what: 'protocol', index: -1, cycle: run.violationAt[i] ?? end, expected: 'no violation', actual: v }));
  const n = Math.max(exp.responses.length, run.responses.length);
  for (let i = 0; i < n; i++) {
    const e = exp.responses[i];
    const a = run.responses[i];
    if (showRsp(e) !== showRsp(a)) out.push({ what: 'response', index: i, cycle: run.responseAt[i] ?? end, expected: showRsp(e), actual: showRsp(a), ...(ops[i] && { op: showOp(ops[i]!) }) });
  }
  for (let i = 0; i < Math.max(exp.reads.length, run.reads.length); i++) {
    const e = exp.reads[i];
    const a = run.reads[i];
    if (e !== a) out.push({ what: 'read address', index: i, cycle: run.readAt[i] ?? end, expected: e === undefined ? 'none' : h64(e), actual: a === undefined ? 'none' : h64(a) });
  }
  for (let i = 0; i < Math.max(exp.writes.length, run.writes.length); i++) {
    const e = exp.writes[i];
    const a = run.writes[i];
    const s = (w: AtomicWrite | undefined) => (w ? `${h64(w.addr)} ${w.data} strb ${w.strb.toString(16)}` : 'none');
    if (s(e) !== s(a)) out.push({ what: 'write', index: i, cycle: run.writeAt[i] ?? end, expected: s(e), actual: s(a) });
  }
  const addrs = new Set([...exp.memory.keys(), ...memory.keys()]);
  const lastWrite = (addr: bigint): number => {
    for (let i = run.writes.length - 1; i >= 0; i--) if (run.writes[i]!.addr === addr) return run.writeAt[i] ?? end;
    return end;
  };
  for (const addr of [...addrs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))) {
    const e = hex(readWord(exp.memory, addr));
    const a = hex(readWord(memory, addr));
    if (e !== a) out.push({ what: `final memory ${h64(addr)}`, index: -1, cycle: lastWrite(addr), expected: e, actual: a });
  }
  return out;
}

// ---- the random co-simulation -------------------------------------------------------------------------

export interface AtomicCosimOptions extends DutSelection {
  readonly seed: number;
  readonly operations: number;
  /** cfg_big_endian (default false: little-endian host memory, the project default). */
  readonly bigEndian?: boolean;
  /** Per-cycle probability of a request gap / rd, wr, rsp back-pressure (default 0.3). */
  readonly pause?: number;
  readonly maxLatency?: number;
}

export interface AtomicCosimResult {
  readonly dut: 'atomic_unit';
  readonly seed: number;
  readonly operations: number;
  readonly bigEndian: boolean;
  readonly mismatches: number;
  readonly cycles: number;
  readonly reads: number;
  readonly writes: number;
  readonly simCyclesPerSecond: number;
  /** What the random sequence exercised. */
  readonly coverage: {
    readonly fetchAdd: number;
    readonly fetchAddCarryAcrossLane: number;
    readonly fetchAddWrap: number;
    readonly cmpSwapHit: number;
    readonly cmpSwapMiss: number;
    readonly misaligned: number;
    readonly unsupported: number;
    /** Operations on the same address as the one before (ordering matters). */
    readonly sameAddressAsPrevious: number;
  };
  readonly violations: readonly string[];
  readonly firstMismatch?: AtomicMismatch;
}

const ONES = MASK64;
const LANE_MASKS = [0x8080808080808080n, 0x8000800080008000n, 0x8000000080000000n, 0x8000000000000000n, 0x0000000000000001n, 0x00000000000000ffn, 0x0000000080000000n];
const SELECT_MASKS = [0xff00ff00ff00ff00n, 0x00000000ffffffffn, 0xffffffff00000000n, 0x000000000000ffffn, 0x8000000000000001n];

/** Values that make adders and comparators interesting. */
function interesting(r: Prng): bigint {
  return r.pick([0n, 1n, 2n, ONES, ONES - 1n, 0x7fffffffffffffffn, 1n << 63n, 0x00000000ffffffffn, 0xffffffff00000000n, 0x7f7f7f7f7f7f7f7fn, 0x0101010101010101n, r.u64(), r.u64()]);
}

export interface AtomicScenario {
  readonly ops: AtomicOp[];
  readonly memory: WordMemory;
}

/**
 * A random sequence biased to hit: operands from masks 0 / all ones / lane masks, compares made
 * from the value the target will hold (so they hit, or miss by one selected bit), adds that carry
 * across lanes and wrap; a few addresses reused back to back; misaligned targets and unsupported
 * AOpCodes mixed in.
 */
export function atomicScenario(seed: number, operations: number, endian: Endian): AtomicScenario {
  const r = prng(seed);
  const pool: bigint[] = [0n, 0x1000n, 0x1008n, 0xfffffffffffffff8n, BigInt((r.u32() & ~7) >>> 0) | (BigInt(r.u32()) << 32n)];
  for (let i = 0; i < 4; i++) pool.push(((r.u64() >> 3n) << 3n) & ONES);
  const memory: WordMemory = new Map();
  for (const a of pool) if (r.bool(0.9)) memory.set(a, u64ToBytes(interesting(r), endian));
  // The current values, to aim compares and carries (misaligned / unsupported never change them).
  const cur = new Map<bigint, bigint>([...memory].map(([a, w]) => [a, bytesToU64(w, endian)]));
  const ops: AtomicOp[] = [];
  let prev = pool[0]!;
  for (let i = 0; i < operations; i++) {
    let addr = r.bool(0.35) ? prev : r.pick(pool);
    const tag = r.u32();
    const kind = r.int(0, 99);
    if (kind < 4) {
      ops.push({ aopcode: r.pick([1, 3, 4, 5, 7, 8, 0xa, 0xe, 0xf]), addr, addSwap: r.u64(), addSwapMask: r.u64(), compare: r.u64(), compareMask: r.u64(), tag });
      continue;
    }
    if (kind < 9) {
      addr = (addr + BigInt(r.int(1, 7))) & ONES;
      ops.push({ aopcode: r.pick([AOpCode.FETCH_ADD, AOpCode.CMP_SWAP]), addr, addSwap: r.u64(), addSwapMask: 0n, compare: 0n, compareMask: 0n, tag });
      continue;
    }
    prev = addr;
    const o = cur.get(addr) ?? 0n;
    if (kind < 55) {
      const K = r.pick([0n, 0n, ONES, ...LANE_MASKS, interesting(r), r.u64()]);
      // Adds that carry across field boundaries and wrap: complements of the value, ±1, lanes.
      const A = r.pick([0n, 1n, ONES, (ONES - o + 1n) & ONES, (ONES - o + BigInt(r.int(1, 300))) & ONES, 0x0101010101010101n, 0x0000000100000001n, interesting(r), r.u64()]);
      ops.push({ aopcode: AOpCode.FETCH_ADD, addr, addSwap: A, addSwapMask: K, compare: r.u64(), compareMask: r.u64(), tag });
      cur.set(addr, fetchAdd(o, A, K));
    } else {
      const CM = r.pick([ONES, ONES, 0n, ...SELECT_MASKS, r.u64()]);
      let CD: bigint;
      if (r.bool(0.6) || CM === 0n) CD = o ^ (r.u64() & ~CM & ONES); // hit: differs only outside CM
      else {
        // miss by one bit inside CM (or anywhere inside it)
        const bits = [...Array(64).keys()].filter((b) => (CM >> BigInt(b)) & 1n);
        CD = r.bool(0.7) ? o ^ (1n << BigInt(r.pick(bits))) : o ^ (r.u64() & CM) ^ (CM & -CM);
      }
      const SM = r.pick([ONES, ONES, 0n, ...SELECT_MASKS, r.u64()]);
      const SD = interesting(r);
      ops.push({ aopcode: AOpCode.CMP_SWAP, addr, addSwap: SD, addSwapMask: SM, compare: CD, compareMask: CM, tag });
      const res = cmpSwap(o, CD, CM, SD, SM);
      cur.set(addr, res.value);
    }
  }
  return { ops, memory };
}

export function cosimAtomicUnit(opts: AtomicCosimOptions): AtomicCosimResult {
  const bigEndian = opts.bigEndian ?? false;
  const endian: Endian = bigEndian ? 'big' : 'little';
  const { ops, memory } = atomicScenario(opts.seed, opts.operations, endian);
  const expected = expectAtomics(ops, memory, endian);
  const p = opts.pause ?? 0.3;
  const run = runAtomicUnit({
    ops, memory, bigEndian, seed: opts.seed ^ 0x5a5a5a5a,
    reqGap: p, rdPause: p, wrPause: p, rspPause: p,
    ...(opts.maxLatency !== undefined && { maxLatency: opts.maxLatency }),
    model: openAtomicUnit(dutSelection(opts)),
    closeModel: true,
  });
  const mismatches = compareAtomics(ops, expected, run, memory);

  // Coverage, from the model's view of each operation.
  const cov = { fetchAdd: 0, fetchAddCarryAcrossLane: 0, fetchAddWrap: 0, cmpSwapHit: 0, cmpSwapMiss: 0, misaligned: 0, unsupported: 0, sameAddressAsPrevious: 0 };
  let prevAddr: bigint | null = null;
  ops.forEach((op, i) => {
    const rsp = expected.responses[i]!;
    if (rsp.status === STATUS.UNSUPPORTED) cov.unsupported++;
    else if (rsp.status === STATUS.MISALIGNED) cov.misaligned++;
    else {
      if (op.addr === prevAddr) cov.sameAddressAsPrevious++;
      prevAddr = op.addr;
      if (op.aopcode === AOpCode.FETCH_ADD) {
        cov.fetchAdd++;
        const plain = (rsp.orig + op.addSwap) & ONES;
        if (op.addSwapMask === 0n && rsp.orig + op.addSwap > ONES) cov.fetchAddWrap++;
        // A carry was cut at a field MSB: the masked add differs from the plain one.
        if (fetchAdd(rsp.orig, op.addSwap, op.addSwapMask) !== plain) cov.fetchAddCarryAcrossLane++;
      } else if (rsp.match) cov.cmpSwapHit++;
      else cov.cmpSwapMiss++;
    }
  });

  return {
    dut: 'atomic_unit',
    seed: opts.seed,
    operations: ops.length,
    bigEndian,
    mismatches: mismatches.length,
    cycles: run.cycles,
    reads: run.reads.length,
    writes: run.writes.length,
    simCyclesPerSecond: run.simCyclesPerSecond,
    coverage: cov,
    violations: run.violations,
    ...(mismatches[0] && { firstMismatch: mismatches[0] }),
  };
}
