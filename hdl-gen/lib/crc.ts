import { deriveCrcMatrices, type CrcParams } from '../../ts-model/crc32c';
import { Expr, cat, lit, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { power, type Gf2Matrix } from './gf2';
import { oneHotMux } from './onehot';

/**
 * The CRC component (Amaranth's `lib/crc` Processor, pipelined as in Shen et al., "Parallel CRC on
 * an FPGA at terabit speeds", ICFPT 2022): a CRC over a stream of beats of W octets whose first
 * `count` units (octets, or 4-octet words) are valid, every matrix derived from the model's
 * parameter object (ts-model/crc32c), one beat per cycle, with a declared latency.
 *
 * The trick that keeps the feedback loop short for beats of any length: a beat's k valid octets d
 * are moved to the end of the W-octet block (zeros first), so the data term is the one full-width
 * matrix, P = D_W · [0…0, d] = D_k · d, and the register term is Z^k · crc, Z being the one-octet
 * state matrix. Z^k (and Z^k · init for a first beat) are picked from k a stage before the loop and
 * registered as coefficient bits, so the loop is
 *
 *   crc' = ⊕_i (C_bi ∧ crc_i) ⊕ U_b ⊕ P_b        (32 AND terms, 3 LUT levels)
 *
 * whatever k is: no rewind in the loop, no partial-beat matrices.
 *
 *   stage 0  input register (optional): valid, data, count, start/load, state, tag
 *   stage 1  data shifted to the end of the block; k one-hot; C = Z^k, Z^k·init as bits
 *   stage 2  U = Z^k·init (start) or Z^k·state (load: a saved register to continue from) or 0;
 *            the data term as partial XORs of at most 36 bits each
 *   stage 3  the loop register: the raw CRC register after the beat (`crc`), with the tag
 *
 * `advance` is the pipeline's clock enable: when it is 0 every stage holds (a stalled pipeline
 * around it). Latency: 3 cycles of advance from the beat to `crc` (4 with the input register).
 */
export interface CrcBeatIn {
  readonly valid: Expr;
  /** W octets, stream order from lane 0 (tdata[7:0]). */
  readonly data: Expr;
  /** Valid units at the front: 0 … W/unit, as a number, or as a one-hot (bit k: k units; cheaper when the caller has it). */
  readonly count: Expr | { readonly oneHot: Expr };
  /** Start from the parameter object's init value (the first beat of a frame). */
  readonly start: Expr;
  /** Start from `state` instead (a saved register: a context switch). */
  readonly load?: Expr;
  readonly state?: Expr;
  /** Carried along to the output with the beat (same latency). */
  readonly tag?: Expr;
}

export interface CrcPipelineOptions {
  readonly params: CrcParams;
  /** Octets per beat (a multiple of `unit`). */
  readonly bytes: number;
  /** Octets per count unit: 1, or 4 for MPA's 32-bit words. */
  readonly unit: 1 | 4;
  /** Register the inputs first (latency 4 instead of 3), for callers whose inputs come from deep logic. */
  readonly inputRegister: boolean;
  /** Clock enable of every stage (default: always). */
  readonly advance?: Expr;
}

export interface CrcPipeline {
  /** Cycles (of advance) from a beat to its `crc`. */
  readonly latency: number;
  readonly valid: Signal;
  /** The raw CRC register after the beat (XOR with params.xorOut for the value; compare to params.residue to check). */
  readonly crc: Signal;
  readonly tag: Signal | null;
  /** Some stage holds a beat (its output `valid` included). */
  readonly busy: Expr;
  /** Widths the count input takes. */
  readonly countWidth: number;
}

/** Bits of a 32×32 matrix row i, column j, as the model stores it (row mask over input bits). */
const bitOf = (a: Gf2Matrix, row: number, col: number): boolean => ((a[row]! >>> col) & 1) === 1;

/** How many XOR inputs a partial of the data term takes (two LUT6 levels). */
const PARTIAL = 36;

export function crcPipeline(m: ModuleBuilder, name: string, opts: CrcPipelineOptions, input: CrcBeatIn): CrcPipeline {
  const { params, bytes: W, unit } = opts;
  if (!Number.isInteger(W) || W < unit || W % unit !== 0) throw new HdlError(`crc '${name}': width ${W} must be a multiple of ${unit} octets`);
  if (input.data.width !== 8 * W) throw new HdlError(`crc '${name}': data is ${input.data.width} bits, expected ${8 * W}`);
  const N = W / unit;
  const countWidth = Math.ceil(Math.log2(N + 1));
  const countIn = input.count;
  if (countIn instanceof Expr ? countIn.width !== countWidth : countIn.oneHot.width !== N + 1) {
    throw new HdlError(`crc '${name}': count must be ${countWidth} bits (0..${N}) or a one-hot of ${N + 1}`);
  }
  if (!!input.load !== !!input.state) throw new HdlError(`crc '${name}': load and state go together`);
  const advance = opts.advance ?? lit(1, 1);
  const tagWidth = input.tag?.width ?? 0;
  const z = deriveCrcMatrices(params, 1).stateRows;
  const dataRows = deriveCrcMatrices(params, W).dataRows;
  const zk = Array.from({ length: N + 1 }, (_, k) => power(z, k * unit));
  const init = params.init >>> 0;
  const applyConst = (a: Gf2Matrix, x: number): number => {
    let r = 0;
    for (let b = 0; b < 32; b++) {
      let p = 0;
      for (let i = 0; i < 32; i++) if (bitOf(a, b, i) && (x >>> i) & 1) p ^= 1;
      r |= p << b;
    }
    return r >>> 0;
  };
  const zkInit = zk.map((a) => applyConst(a, init));

  /** A register of this pipeline: loads `v` when advance. */
  const stageReg = (rname: string, v: Expr, reset?: number): Signal => {
    const r = m.reg(`${name}_${rname}`, v.width, reset === undefined ? {} : { reset });
    m.sync(() => m.when(advance, () => m.set(r, v)));
    return r;
  };

  // ---- stage 0: the inputs, registered or not; k as a one-hot and the shift j = N − k in binary ------
  const load = input.load ?? lit(1, 0);
  const state = input.state ?? lit(32, 0);
  const countOneHot = countIn instanceof Expr ? cat(...Array.from({ length: N + 1 }, (_, k) => countIn.eq(lit(countWidth, k))).reverse()) : countIn.oneHot;
  const ks = Array.from({ length: N + 1 }, (_, k) => k);
  const orOfOneHot = (oh: Expr, sel: readonly number[]): Expr => (sel.length ? sel.map((k) => oh.bit(k)).reduce((a, b) => a.or(b)) : lit(1, 0));
  const shiftOf = (oh: Expr): Expr => cat(...Array.from({ length: countWidth }, (_, b) => orOfOneHot(oh, ks.filter((k) => ((N - k) >> b) & 1))).reverse());
  const s0 = opts.inputRegister
    ? {
        valid: stageReg('in_valid', input.valid, 0),
        data: stageReg('in_data', input.data),
        onehot: stageReg('in_count_onehot', countOneHot),
        shift: stageReg('in_shift', shiftOf(countOneHot)),
        start: stageReg('in_start', input.start),
        load: input.load ? stageReg('in_load', load) : load,
        state: input.state ? stageReg('in_state', state) : state,
        tag: input.tag ? stageReg('in_tag', input.tag) : null,
      }
    : (() => {
        const onehot = m.let(`${name}_count_onehot`, countOneHot, { doc: 'bit k: a beat of k units' });
        return { ...input, onehot, shift: shiftOf(onehot), load, state, tag: input.tag ?? null };
      })();

  // ---- stage 1: end-aligned data, Z^k and Z^k·init for this beat's k as constants ---------------
  // Shift up by j = N − k units: the valid units end at the top lane, zeros below them.
  const j = m.let(`${name}_shift`, s0.shift, { doc: 'units of zeros before the data (N - k)' });
  let aligned: Expr = s0.data;
  for (let b = 0; (1 << b) <= N; b++) {
    const by = 8 * unit * (1 << b);
    if (by >= 8 * W) {
      aligned = mux(j.bit(b), lit(8 * W, 0), aligned);
      continue;
    }
    aligned = mux(j.bit(b), cat(aligned.slice(8 * W - 1 - by, 0), lit(by, 0)), aligned);
  }
  // C = Z^k (row b as a 32-bit vector) and Z^k·init: a one-hot mux of constants, whole words
  // (the same OR of one-hot bits per bit after constant folding, and a few word operations a row in
  // simulation instead of 32 single-bit terms).
  const constantOf = (values: readonly number[]): Expr => {
    const cases = values.flatMap((v, k) => (v ? [[s0.onehot.bit(k), lit(32, v >>> 0)] as const] : []));
    return cases.length ? oneHotMux(cases) : lit(32, 0);
  };
  const zkRows = Array.from({ length: 32 }, (_, b) => constantOf(zk.map((a) => a[b]!)));
  const r1 = {
    valid: stageReg('s1_valid', s0.valid, 0),
    data: stageReg('s1_data', m.let(`${name}_aligned`, aligned, { doc: 'the valid units at the end of the block' })),
    start: stageReg('s1_start', s0.start),
    load: stageReg('s1_load', s0.load),
    state: stageReg('s1_state', s0.state),
    zk: zkRows.map((row, b) => stageReg(`s1_zk_row${b}`, row)),
    zkInit: stageReg('s1_zk_init', constantOf(zkInit)),
    tag: s0.tag ? stageReg('s1_tag', s0.tag) : null,
  };

  // ---- stage 2: the register term's coefficients and constant, the data term's partials -------
  const zkState = cat(...r1.zk.map((row) => row.and(r1.state).parity()).reverse());
  const u = mux(r1.start, r1.zkInit, mux(r1.load, zkState, lit(32, 0)));
  const fresh = r1.start.or(r1.load);
  const partialsPerBit: number[] = [];
  const partials: Expr[] = [];
  for (let b = 0; b < 32; b++) {
    const cols: number[] = [];
    for (let k = 0; k < 8 * W; k++) if ((dataRows[b]! >> BigInt(k)) & 1n) cols.push(k);
    let n = 0;
    for (let at = 0; at < cols.length; at += PARTIAL) {
      let mask = 0n;
      for (const k of cols.slice(at, at + PARTIAL)) mask |= 1n << BigInt(k);
      partials.push(r1.data.and(lit(8 * W, mask)).parity());
      n++;
    }
    partialsPerBit.push(n);
  }
  const r2 = {
    valid: stageReg('s2_valid', r1.valid, 0),
    // A fresh start drops the register term (C = 0); the constant or loaded term is in U.
    coeff: stageReg('s2_coeff', cat(...r1.zk.map((row) => mux(fresh, lit(32, 0), row)).reverse())),
    u: stageReg('s2_u', u),
    p: stageReg('s2_data_partials', cat(...[...partials].reverse())),
    tag: r1.tag ? stageReg('s2_tag', r1.tag) : null,
  };

  // ---- stage 3: the loop ---------------------------------------------------------------------
  const crc = m.reg(`${name}_crc`, 32, { reset: init, doc: 'the raw CRC register after the last beat' });
  let at = 0;
  const next = cat(
    ...Array.from({ length: 32 }, (_, b) => {
      const reg = r2.coeff.slice(32 * b + 31, 32 * b).and(crc).parity();
      const n = partialsPerBit[b]!;
      const p = n ? r2.p.slice(at + n - 1, at).parity() : lit(1, 0);
      at += n;
      return reg.xor(r2.u.bit(b)).xor(p);
    }).reverse(),
  );
  const nextCrc = m.let(`${name}_next`, next, { doc: 'the loop: Z^k crc xor U xor D data' });
  const valid = m.reg(`${name}_valid`, 1, { reset: 0, doc: 'crc holds the register after a beat that just left stage 2' });
  const tag = r2.tag ? m.reg(`${name}_tag`, tagWidth) : null;
  m.sync(() =>
    m.when(advance, () => {
      m.set(valid, r2.valid);
      m.when(r2.valid, () => m.set(crc, nextCrc));
      if (tag && r2.tag) m.set(tag, r2.tag);
    }),
  );
  const stages = [...(opts.inputRegister ? [s0.valid] : []), r1.valid, r2.valid, valid];
  return { latency: opts.inputRegister ? 4 : 3, valid, crc, tag, countWidth, busy: stages.reduce((a, b) => a.or(b)) };
}
