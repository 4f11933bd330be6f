import { deriveCrcMatrices, type CrcParams } from '../../ts-model/crc32c';
import { Expr, cat, lit, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { apply, power } from './gf2';
import { anyOf, oneHotMux } from './onehot';

/**
 * The CRC component (Amaranth's `lib/crc` Processor, pipelined as in Shen et al., "Parallel CRC on
 * an FPGA at terabit speeds", ICFPT 2022): a CRC over a stream of beats of W octets whose first
 * `count` units (octets, or 4-octet words) are valid, every matrix derived from the model's
 * parameter object (ts-model/crc32c), one beat per cycle, with a declared latency. Z is the
 * one-octet state matrix, D_W the W-octet data matrix; a beat of k valid octets d takes the CRC
 * register from crc to Z^k · crc ⊕ D_k · d.
 *
 * Two forms, by what the caller reads (`form`); both keep the feedback loop at
 *
 *   reg' = ⊕_i (C_bi ∧ reg_i) ⊕ U_b ⊕ P_b        (32 AND terms, 3 LUT levels)
 *
 * whatever k is, with C, U and the data term P prepared in the stages before the loop:
 *
 * - 'value' (a CRC to send): the beat's k octets are moved to the end of the block (zeros first),
 *   so P = D_W · [0…0, d] = D_k · d and C = Z^k: the register is the CRC register itself. The move
 *   is a shifter of W/unit + 1 ways on every data bit.
 * - 'check' (a CRC to check, and to save and continue across a context switch): the beat stays
 *   where it is, its invalid units zeroed, so P = D_W · [d, 0…0] = Z^(W−k) · D_k · d: the CRC of
 *   the beat followed by W − k zero octets. The loop keeps S = Z^(W−k) · crc (k the count of the
 *   beat it last took), for which S' = Z^k_prev · S ⊕ D_W · [d, 0] (Z invertible: the polynomial
 *   has a constant term): C = Z^k_prev, known a beat ahead. A frame ends at the residue when
 *   S = Z^(W−k) · residue, a constant chosen by the last beat's k (`matches`); a saved state is S
 *   with its k (`state`, `stateWidth` bits). No shifter: a lane mask, which the flip-flops'
 *   synchronous reset absorbs.
 *
 * A load (a saved state to continue from: a context switch) goes into the loop register as its
 * beat enters stage 2, and the beat's C applies to it (Z^k, or Z^k_saved in the 'check' form): no
 * product of its own. The output `crc` is a register beside the loop's, so the beat before the
 * load still leaves with its own value.
 *
 *   stage 0  input register (optional): valid, data, count, start/load, state, tag
 *   stage 1  the data aligned ('value': shifted to the end; 'check': masked); C's rows as
 *            constants picked by k ('value': this beat's; 'check': the last beat's, or the loaded
 *            state's)
 *   stage 2  U = the start constant (start) or 0; the data term as partial XORs of at most 36
 *            bits each; a load's state into the loop register
 *   stage 3  the loop register and the output `crc`, with the tag
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
  /** Start from `state` instead (a saved register: a context switch; `stateWidth` bits, from a pipeline's `state`). */
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
  /** 'value' (default): `crc` is the CRC register; 'check': `matches` and `state` only (no shifter). */
  readonly form?: 'value' | 'check';
}

export interface CrcPipeline {
  /** Cycles (of advance) from a beat to its `crc`. */
  readonly latency: number;
  readonly valid: Signal;
  /**
   * The loop register after the beat. 'value': the raw CRC register (XOR with params.xorOut for
   * the value; compare to params.residue to check). 'check': Z^(W−k) times it.
   */
  readonly crc: Signal;
  /** 'check': the raw CRC register after the beat is params.residue (the frame and its CRC field check). */
  readonly matches: Expr | null;
  /** 'check' with `load`: what a context saves to continue the frame later (the `state` of a load). */
  readonly state: Expr | null;
  readonly tag: Signal | null;
  /** Some stage holds a beat (its output `valid` included). */
  readonly busy: Expr;
  /** Widths the count input takes. */
  readonly countWidth: number;
}

/** How many XOR inputs a partial of the data term takes (two LUT6 levels). */
const PARTIAL = 36;

/** Bits of the `state` a 'check' pipeline saves and loads: the register and its beat's count. */
export function crcStateWidth(opts: Pick<CrcPipelineOptions, 'bytes' | 'unit' | 'form'>): number {
  return opts.form === 'check' ? 32 + countWidthOf(opts.bytes / opts.unit) : 32;
}

/** Bits of a count of 0..n units. */
const countWidthOf = (n: number): number => Math.ceil(Math.log2(n + 1));

export function crcPipeline(m: ModuleBuilder, name: string, opts: CrcPipelineOptions, input: CrcBeatIn): CrcPipeline {
  const { params, bytes: W, unit } = opts;
  const check = opts.form === 'check';
  if (!Number.isInteger(W) || W < unit || W % unit !== 0) throw new HdlError(`crc '${name}': width ${W} must be a multiple of ${unit} octets`);
  if (input.data.width !== 8 * W) throw new HdlError(`crc '${name}': data is ${input.data.width} bits, expected ${8 * W}`);
  const N = W / unit;
  const countWidth = countWidthOf(N);
  const countIn = input.count;
  if (countIn instanceof Expr ? countIn.width !== countWidth : countIn.oneHot.width !== N + 1) {
    throw new HdlError(`crc '${name}': count must be ${countWidth} bits (0..${N}) or a one-hot of ${N + 1}`);
  }
  if (!!input.load !== !!input.state) throw new HdlError(`crc '${name}': load and state go together`);
  const stateWidth = crcStateWidth(opts);
  if (input.state && input.state.width !== stateWidth) throw new HdlError(`crc '${name}': state is ${input.state.width} bits, expected ${stateWidth}`);
  const advance = opts.advance ?? lit(1, 1);
  const tagWidth = input.tag?.width ?? 0;
  const z = deriveCrcMatrices(params, 1).stateRows;
  const dataRows = deriveCrcMatrices(params, W).dataRows;
  /** Z^(k units), k = 0..N. */
  const zk = Array.from({ length: N + 1 }, (_, k) => power(z, k * unit));
  const init = params.init >>> 0;

  /** A register of this pipeline: loads `v` when advance. */
  const stageReg = (rname: string, v: Expr, reset?: number): Signal => {
    const r = m.reg(`${name}_${rname}`, v.width, reset === undefined ? {} : { reset });
    m.sync(() => m.when(advance, () => m.set(r, v)));
    return r;
  };
  const ks = Array.from({ length: N + 1 }, (_, k) => k);
  const orOfOneHot = (oh: Expr, sel: readonly number[]): Expr => (sel.length ? anyOf(sel.map((k) => oh.bit(k))) : lit(1, 0));
  /** A count as a one-hot of N + 1 bits. */
  const oneHotOf = (count: Expr): Expr => cat(...ks.map((k) => count.eq(lit(countWidth, k))).reverse());
  /** A one-hot count in binary. */
  const binaryOf = (oh: Expr): Expr => cat(...Array.from({ length: countWidth }, (_, b) => orOfOneHot(oh, ks.filter((k) => (k >> b) & 1))).reverse());
  /** A 32-bit constant picked by a one-hot count (values[k] for bit k): an AND-OR of words. */
  const constantOf = (oh: Expr, values: readonly number[]): Expr => {
    const cases = values.flatMap((v, k) => (v ? [[oh.bit(k), lit(32, v >>> 0)] as const] : []));
    return cases.length ? oneHotMux(cases) : lit(32, 0);
  };

  // The registers that pick constants hold k in binary when it has at most 6 bits: each bit
  // picked is then one LUT of them (at 17 or 20 counts, the MPA blocks', fewer LUTs than from a
  // one-hot); with more (65 counts at one-octet units) in one-hot, as a 7-input function takes
  // two LUTs and a MUXF7.
  const binaryPick = countWidth <= 6;
  /** A count as the registers hold it, from its binary and its one-hot. */
  const encode = (binary: Expr, oneHot: Expr): Expr => (binaryPick ? binary : oneHot);
  /** A held count as a one-hot (decoded into a named wire from binary). */
  const decoded = (wname: string, held: Expr, doc: string): Expr => (binaryPick ? m.let(`${name}_${wname}`, oneHotOf(held), { doc }) : held);
  /** A held count in binary. */
  const binary = (held: Expr): Expr => (binaryPick ? held : binaryOf(held));

  // ---- stage 0: the inputs, registered or not; k as the registers hold it, and the shift N − k
  // ('value') or the units kept, bit i for k > i ('check') ----
  const load = input.load ?? lit(1, 0);
  const state = input.state ?? lit(stateWidth, 0);
  const countOneHot = countIn instanceof Expr ? oneHotOf(countIn) : countIn.oneHot;
  const countBinary = countIn instanceof Expr ? countIn : binaryOf(countIn.oneHot);
  const shiftOf = (oh: Expr): Expr => cat(...Array.from({ length: countWidth }, (_, b) => orOfOneHot(oh, ks.filter((k) => ((N - k) >> b) & 1))).reverse());
  // From a binary count, a compare each (not through the one-hot).
  const keptOf = (oh: Expr): Expr => cat(...Array.from({ length: N }, (_, i) => (countIn instanceof Expr ? countIn.gt(lit(countWidth, i)) : orOfOneHot(oh, ks.slice(i + 1)))).reverse());
  const s0 = opts.inputRegister
    ? {
        valid: stageReg('in_valid', input.valid, 0),
        data: stageReg('in_data', input.data),
        count: stageReg(binaryPick ? 'in_count' : 'in_count_onehot', encode(countBinary, countOneHot)),
        shift: check ? null : stageReg('in_shift', shiftOf(countOneHot)),
        kept: check ? stageReg('in_units_kept', keptOf(countOneHot)) : null,
        start: stageReg('in_start', input.start),
        load: input.load ? stageReg('in_load', load) : load,
        state: input.state ? stageReg('in_state', state) : state,
        tag: input.tag ? stageReg('in_tag', input.tag) : null,
      }
    : (() => {
        // Named where it is read: by the shift, by the units kept from a one-hot, by one-hot registers.
        const read = !check || !(countIn instanceof Expr) || !binaryPick;
        const onehot = read ? m.let(`${name}_count_onehot`, countOneHot, { doc: 'bit k: a beat of k units' }) : countOneHot;
        return { ...input, count: encode(countBinary, onehot), shift: check ? null : shiftOf(onehot), kept: check ? keptOf(onehot) : null, load, state, tag: input.tag ?? null };
      })();

  // ---- stage 1: the aligned data; C's rows as constants picked by a count ------------------------
  let aligned: Expr = s0.data;
  /** Bit k: C is Z^k. */
  let rowsBy: Expr;
  let checkRegs: { count: Signal; expect: Expr } | null = null;
  if (s0.shift) {
    // 'value': this beat's count picks C and the start's constant.
    rowsBy = decoded('count_is', s0.count, 'bit k: the beat in stage 0 has k units');
    // 'value': up by j = N − k units, so the valid units end at the top lane, zeros below them.
    const j = m.let(`${name}_shift`, s0.shift, { doc: 'units of zeros before the data (N - k)' });
    for (let b = 0; (1 << b) <= N; b++) {
      const by = 8 * unit * (1 << b);
      if (by >= 8 * W) {
        aligned = mux(j.bit(b), lit(8 * W, 0), aligned);
        continue;
      }
      aligned = mux(j.bit(b), cat(aligned.slice(8 * W - 1 - by, 0), lit(by, 0)), aligned);
    }
  } else {
    // 'check': the units past k zeroed (a select per unit: the flip-flops' reset).
    const kept = s0.kept;
    if (!kept) throw new HdlError(`crc '${name}': internal: no units kept`);
    aligned = cat(...Array.from({ length: N }, (_, i) => mux(kept.bit(i), s0.data.slice(8 * unit * (i + 1) - 1, 8 * unit * i), lit(8 * unit, 0))).reverse());
    // The count of the last beat taken: while a beat is in stage 1 it is that beat's (its k for
    // the residue and the saved state), and at the next beat's entry the k_prev of its C.
    const lastCount = m.reg(`${name}_s1_count`, s0.count.width, { reset: binaryPick ? 0 : 1, doc: 'the count of the last beat to enter stage 1' });
    m.sync(() => m.when(advance.and(s0.valid), () => m.set(lastCount, s0.count)));
    // A load continues from the saved state: its count picks C, which the loop applies to it.
    const saved = s0.state.slice(stateWidth - 1, 32);
    rowsBy = decoded('rows_by', mux(s0.load, encode(saved, oneHotOf(saved)), lastCount), "bit k: Z^k is C (k the last beat's count, the loaded state's on a load)");
    // S = Z^(W−k) · residue at the end of a frame that checks.
    const lastIs = decoded('s1_count_is', lastCount, 'bit k: the last beat to enter stage 1 had k units');
    checkRegs = { count: lastCount, expect: constantOf(lastIs, ks.map((k) => apply(zk[N - k]!, params.residue >>> 0))) };
  }
  // C: Z^k rows (row b as a 32-bit vector) as a one-hot mux of constants, whole words (the same
  // OR of one-hot bits per bit after constant folding, and a few word operations a row in
  // simulation instead of 32 single-bit terms).
  const zkRows = Array.from({ length: 32 }, (_, b) => constantOf(rowsBy, zk.map((a) => a[b]!)));
  const r1 = {
    valid: stageReg('s1_valid', s0.valid, 0),
    data: stageReg('s1_data', m.let(`${name}_aligned`, aligned, { doc: check ? 'the valid units, the others zero' : 'the valid units at the end of the block' })),
    start: stageReg('s1_start', s0.start),
    // A load and its state (a caller that loads).
    load: input.load ? { valid: stageReg('s1_load', s0.load), state: stageReg('s1_state', s0.state.slice(31, 0)) } : null,
    zk: zkRows.map((row, b) => stageReg(`s1_zk_row${b}`, row)),
    // 'value': a start's register term is Z^k · init; 'check': Z^W · init, whatever k.
    init: check ? lit(32, apply(zk[N]!, init)) : stageReg('s1_zk_init', constantOf(rowsBy, zk.map((a) => apply(a, init)))),
    tag: s0.tag ? stageReg('s1_tag', s0.tag) : null,
  };

  // ---- stage 2: the register term's coefficients and constant, the data term's partials -------
  const u = mux(r1.start, r1.init, lit(32, 0));
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
    // A start drops the register term (C = 0); its constant is U. A load keeps C: the loop
    // register holds the loaded state by then (stage 3).
    coeff: stageReg('s2_coeff', cat(...r1.zk.map((row) => mux(r1.start, lit(32, 0), row)).reverse())),
    u: stageReg('s2_u', u),
    p: stageReg('s2_data_partials', cat(...[...partials].reverse())),
    tag: r1.tag ? stageReg('s2_tag', r1.tag) : null,
    check: checkRegs && {
      count: input.load ? stageReg('s2_count', binary(checkRegs.count)) : null,
      expect: stageReg('s2_expect', checkRegs.expect),
    },
  };

  // ---- stage 3: the loop ---------------------------------------------------------------------
  // A caller that loads has a loop register beside the output `crc`, the same value but after a
  // load: a beat that loads a state writes it there as it enters stage 2, while the beat before
  // it (another stream's, maybe) still leaves in `crc`. Without loads the loop register is `crc`.
  const crc = m.reg(`${name}_crc`, 32, { reset: init, doc: check ? 'Z^(W-k) times the raw CRC register after the last beat (k its count)' : 'the raw CRC register after the last beat' });
  const loop = r1.load ? m.reg(`${name}_loop`, 32, { reset: init, doc: 'the register the next beat continues from (crc, or a loaded state)' }) : crc;
  let at = 0;
  const next = cat(
    ...Array.from({ length: 32 }, (_, b) => {
      const reg = r2.coeff.slice(32 * b + 31, 32 * b).and(loop).parity();
      const n = partialsPerBit[b]!;
      const p = n ? r2.p.slice(at + n - 1, at).parity() : lit(1, 0);
      at += n;
      return reg.xor(r2.u.bit(b)).xor(p);
    }).reverse(),
  );
  const nextCrc = m.let(`${name}_next`, next, { doc: 'the loop: C loop xor U xor D data' });
  const valid = m.reg(`${name}_valid`, 1, { reset: 0, doc: 'crc holds the register after a beat that just left stage 2' });
  const tag = r2.tag ? m.reg(`${name}_tag`, tagWidth) : null;
  const r3 = r2.check && {
    count: r2.check.count && m.reg(`${name}_count`, countWidth, { doc: 'the count of the beat crc is after' }),
    expect: m.reg(`${name}_expect`, 32, { doc: 'Z^(W-k) times the residue, k that count: crc at the end of a frame that checks' }),
  };
  m.sync(() =>
    m.when(advance, () => {
      m.set(valid, r2.valid);
      m.when(r2.valid, () => {
        m.set(crc, nextCrc);
        if (loop !== crc) m.set(loop, nextCrc);
        if (r3 && r2.check) {
          if (r3.count && r2.check.count) m.set(r3.count, r2.check.count);
          m.set(r3.expect, r2.check.expect);
        }
      });
      if (tag && r2.tag) m.set(tag, r2.tag);
      if (r1.load) {
        const { valid: loads, state: saved } = r1.load;
        m.when(r1.valid.and(loads), () => m.set(loop, saved));
      }
    }),
  );
  const stages = [...(opts.inputRegister ? [s0.valid] : []), r1.valid, r2.valid, valid];
  return {
    latency: opts.inputRegister ? 4 : 3,
    valid,
    crc,
    matches: r3 && crc.eq(r3.expect),
    state: r3?.count ? cat(r3.count, crc) : null,
    tag,
    countWidth,
    busy: stages.reduce((a, b) => a.or(b)),
  };
}
