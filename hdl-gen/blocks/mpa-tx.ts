import { CRC32C, type CrcParams } from '../../ts-model/crc32c';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { contextMemory } from '../lib/context';
import { crcPipeline } from '../lib/crc';
import { anyOf, oneHotMux } from '../lib/onehot';
import { portGroup } from '../lib/ports';
import { type FieldDef, record } from '../lib/record';
import { MPA_TX_CFG, MPA_TX_ULPDU } from './records';
import { indexBits } from '../lib/ram';
import { pipelineRegister } from '../lib/stage';

/**
 * MPA transmit (RFC 5044; spec/mpa.md §2–§4) for one stream at one input beat per cycle:
 * ULPDUs in, FPDUs out as the TCP payload, one FPDU per output packet (one TCP segment each).
 *
 * s_axis_tuser, sampled on the first beat of each ULPDU: its ULPDU_Length (record mpa_tx_ulpdu).
 * Everything else is the QP's framing context (record mpa_tx_qp_ctx: markers, CRC, and the
 * distance in output slots from the QP's next FPDU start to its next marker slot, −(seq − S0)/4
 * mod 128, §4.3), kept per QP in a context memory (hdl-gen/lib/context.ts; one entry for the
 * one-QP block, the same code path). The configuration port loads it with a new connection:
 * cfg_valid with the MPA_TX_CFG fields (cfg_markers, cfg_crc, cfg_s0, cfg_seq; cfg_qp when
 * shared) makes the QP's next FPDU start at cfg_seq, and every later one where the one before
 * ended (each FPDU writes the distance after it back as its last beat passes B1), so "has an
 * FPDU gone before" needs no bit of its own: the distance is the phase either way.
 * s_axis_tkeep is all ones but on the tlast beat (2^k − 1 there; 0 for an empty ULPDU).
 *
 * Five stages, each one beat per cycle, the selects of every wide mux registered (at most 6 LUT
 * levels between registers at 64 octets, yosys synth_xilinx):
 *   A  prepends ULPDU_Length (2 octets: the data shift by two lanes), zeroes PAD, and emits the
 *      marker-free FPDU as 32-bit words (everything in MPA is 4-aligned relative to S0, §4.5),
 *      n = W/4 words a beat but on the FPDU's last (or a one-word flush beat after it); the QP's
 *      context is looked up as a ULPDU's first beat enters;
 *   F  takes the context (the lookup's answer) and the distance to the FPDU's first marker slot
 *      (the QP's, or B1's live one when the FPDU follows the same QP's) and decodes it;
 *   B1 inserts the marker into the beat wherever (seq − S0)/4 ≡ 0 mod 128 (at most one per beat
 *      for W ≤ 64) and a stream word follows it in the FPDU, with FPDUPTR pointing back at
 *      ULPDU_Length (0 for a leading marker), and reserves the CRC word after the FPDU's last word
 *      (so a marker lands before it, case d): up to n + 2 words;
 *   B2 a gearbox that packs those words into beats of n (the FPDU's last beat shorter): a hold of
 *      n + 2 words in front of the B1 beat, its count kept as one-hot and thermometer registers;
 *   C  runs the CRC over the output words, markers included (leadMarkerInCrc, §4.6), through the
 *      CRC component (hdl-gen/lib/crc.ts, with its input register: the beat waits beside it, four
 *      cycles), and puts it in its slot, least-significant octet first; the output is a skid buffer.
 * Input stalls only for the words that are inserted (markers, the CRC word): the output sends a
 * beat every cycle while ULPDUs come at full rate. Latency: 8 cycles from an input beat taken to
 * m_axis_tvalid for a beat that passes the gearbox without waiting.
 * err_length (sticky) flags a ULPDU whose tlast does not fall where its ULPDU_Length says.
 *
 * The context memory: looked up as a ULPDU's first beat enters stage A, taken as that beat moves
 * into stage F, written back as an FPDU's last beat passes B1. Hazards cost no cycle: the FPDU
 * right before it is either the same QP's (B1's live distance continues, as with one QP) or
 * another QP's, and then the same QP's previous FPDU passed B1 no later than the lookup (the
 * other FPDU's beats sit between them in A, F and B1), so the memory's forwarding has it.
 *
 * Configuration (a new connection on a QP): cfg_ready is always 1 (no init sweep: a QP is
 * configured before its first ULPDU, its entry is undefined until then). Contract: cfg_valid for
 * a QP comes after the s_axis handshake of the last beat of its previous connection and before
 * (not with) the first beat of its new connection; other QPs stream on meanwhile. The FPDUs of
 * the old connection still in the block go out as they were. The rule that keeps the
 * configuration: it is registered and written into the context memory the next cycle, before
 * anything else (a write-back of another QP's FPDU in that cycle waits: its last beat stays in
 * B1 one cycle), and an FPDU of the same QP still before B1 then (the old connection's) writes
 * nothing back; the QP's next ULPDU does not continue B1's live distance, it looks the new
 * context up (forwarded if written the cycle before).
 */
/** s_axis_tuser: the MPA_TX_ULPDU record (hdl-gen/blocks/records.ts). */
export const MPA_TX_TUSER_BITS = MPA_TX_ULPDU.width;

/** A QP's framing context, in the context memory (the configuration's, then each FPDU's write-back). */
export const MPA_TX_QP_CTX = record('mpa_tx_qp_ctx', {
  k: { width: 7, doc: "output slots from the QP's next FPDU start to its next marker slot: (S0 - seq)/4 mod 128 (spec/mpa.md section 4.3)" },
  markers: { width: 1, doc: 'markers in this direction' },
  crc: { width: 1, doc: 'CRC negotiated' },
});

/** A beat of stage B2's output, as it rides beside the CRC: its words, where the CRC goes. */
const OB_BEAT = (W: number, qb: number) =>
  record<'data' | 'words' | 'last' | 'crc_slot' | 'crc_on' | 'qp'>('mpa_tx_beat', {
    // Shared only (qb > 0); the cast keeps one layout type for both.
    ...((qb ? { qp: { width: qb, doc: 'the QP of the FPDU' } } : {}) as { qp: FieldDef }),
    data: { width: 8 * W, doc: 'FPDU words and markers, the CRC slot empty' },
    words: { width: Math.log2(W / 4) + 1, doc: 'words in the beat' },
    last: { width: 1, doc: 'the FPDU ends in this beat (with the CRC slot)' },
    crc_slot: { width: Math.max(1, Math.log2(W / 4)), doc: 'the word that takes the CRC' },
    crc_on: { width: 1, doc: 'CRC negotiated (off: the field is sent as 0)' },
  });

export interface MpaTxOptions {
  /** The CRC (default CRC32C). */
  readonly params?: CrcParams;
  /** QPs sharing the block (default 1: no tid ports, no context memory). */
  readonly qps?: number;
}

/** The most QPs one mpa_tx serves (issue 10: up to 16384 per RNIC). */
export const MPA_TX_MAX_QPS = 16384;

/** `mpa_tx_w<W>` for one QP, `mpa_tx_w<W>_q<N>` for N QPs sharing it. */
export const mpaTxName = (bytes: number, qps = 1): string => `mpa_tx_w${bytes}${qps > 1 ? `_q${qps}` : ''}`;

/** A select bit known at generation time (a constant) or not: constants fold away. */
type Bit = Expr | boolean;
const and2 = (a: Bit, b: Bit): Bit => (a === false || b === false ? false : a === true ? b : b === true ? a : a.and(b));
const or2 = (a: Bit, b: Bit): Bit => (a === true || b === true ? true : a === false ? b : b === false ? a : a.or(b));
const not1 = (a: Bit): Bit => (typeof a === 'boolean' ? !a : a.not());
const bitExpr = (a: Bit): Expr => (typeof a === 'boolean' ? lit(1, a ? 1 : 0) : a);
/** Bit j of a one-hot vector (0 outside it). */
const ohAt = (v: Expr, j: number): Bit => (j >= 0 && j < v.width ? v.bit(j) : false);
/** "≥ j" from a thermometer vector whose bit i says "≥ i + 1" (1 for j ≤ 0, 0 past its end). */
const geAt = (v: Expr, j: number): Bit => (j <= 0 ? true : j <= v.width ? v.bit(j - 1) : false);
/** Bits 0 … count − 1 of a vector, bit j from f(j). */
const vec = (count: number, f: (j: number) => Bit): Expr => cat(...Array.from({ length: count }, (_, j) => bitExpr(f(j))).reverse());
/**
 * x ≥ c for a constant c as AND/OR logic, most significant bit first, with no carry chain: the
 * compares in front of stage A's masks and flags, where a subtraction would add carry delay.
 */
const atLeastChain = (x: Expr, c: number): Bit => {
  if (c <= 0) return true;
  if (c >= 2 ** x.width) return false;
  const top = x.width - 1;
  const half = 2 ** top;
  const b = x.bit(top);
  const rest = (k: number): Bit => (top === 0 ? k <= 0 : atLeastChain(x.slice(top - 1, 0), k));
  return c >= half ? and2(b, rest(c - half)) : or2(b, rest(c));
};
/**
 * x ≥ c with the bits above c's own as one balanced OR beside the compare of the low bits: a
 * 16-bit ULPDU_Length against a lane index is then 3 LUT levels, where the chain above is 16 gates
 * deep and the mapper, given slack, keeps much of that depth.
 */
const atLeast = (x: Expr, c: number): Bit => {
  const low = Math.ceil(Math.log2(c + 1));
  if (c <= 0 || low >= x.width - 1) return atLeastChain(x, c);
  const above = anyOf(Array.from({ length: x.width - low }, (_, i) => x.bit(low + i)));
  return or2(above, atLeastChain(x.slice(low - 1, 0), c));
};
/** The OR of (select ∧ value) over cases whose selects are one-hot. */
const orCases = (pairs: readonly (readonly [Expr, Bit])[]): Expr => {
  const terms = pairs.map(([s, v]) => and2(s, v)).filter((t): t is Expr => typeof t !== 'boolean');
  return terms.length ? anyOf(terms) : lit(1, 0);
};

export function mpaTxModule(bytes: number, opts: MpaTxOptions = {}): Module {
  const { params = CRC32C, qps = 1 } = opts;
  if (!Number.isInteger(bytes) || bytes < 4 || (bytes & (bytes - 1)) !== 0 || bytes > 64) {
    throw new RangeError(`mpa_tx width must be a power of two from 4 to 64 octets, got ${bytes}`);
  }
  if (!Number.isInteger(qps) || qps < 1 || qps > MPA_TX_MAX_QPS) throw new RangeError(`mpa_tx is shared by 1 to ${MPA_TX_MAX_QPS} QPs, got ${qps}`);
  const qb = qps > 1 ? indexBits(qps) : 0;
  const W = bytes;
  const n = W / 4; // words per beat
  const wBits = Math.log2(n) + 1; // 0..n words
  const sBits = Math.max(1, Math.log2(n)); // a slot index 0..n−1
  const hw = n + 2; // words of a B1 beat at most: n FPDU words, a marker, the CRC slot
  const hBits = Math.ceil(Math.log2(hw + 1)); // 0..hw words
  const m = new ModuleBuilder(
    mpaTxName(W, qps),
    `MPA transmit: ULPDUs in, FPDUs out (ULPDU_Length, ULPDU, PAD, markers, CRC-32C),\n` +
      `${W} octets per beat, one input beat per cycle. RFC 5044 framing (spec/mpa.md sections 2-4).\n` +
      's_axis_tuser on the first beat of a ULPDU: its ULPDU_Length (record mpa_tx_ulpdu). The framing context\n' +
      '(markers, CRC, the marker phase) is kept in a context memory, loaded by cfg_valid (a new connection: its\n' +
      'next FPDU starts at cfg_seq, every later one where the one before ended).\n' +
      'One FPDU per m_axis packet (tlast at the CRC).' +
      (qb ? `\nShared by ${qps} QPs: tid names the QP; cfg_qp the QP configured.` : ''),
    { bytes: W, ...(qb && { qps }) },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const s = sinkStream({ bytes: W, user: MPA_TX_TUSER_BITS, id: qb }).declare(m, 's_axis', 'AXI4-Stream input: ULPDUs (s_axis)', MPA_TX_ULPDU);
  const o = sourceStream({ bytes: W, id: qb }).declare(m, 'm_axis', 'AXI4-Stream output: FPDUs, the TCP payload (m_axis)');
  const user = MPA_TX_ULPDU.view(s.user!, { m, prefix: 'in' });
  const cg = `Configuration: cfg_valid loads ${qb ? "QP cfg_qp's" : 'the'} framing context from the cfg_* fields (a new connection)`;
  const cfgValid = m.input('cfg_valid', 1, { group: cg, doc: 'after the last beat of the connection before, before the first of the new one' });
  const cfgReady = m.output('cfg_ready', 1, { group: cg, doc: 'always 1 (no init sweep: a QP is configured before its first ULPDU)' });
  const cfgQp = qb ? m.input('cfg_qp', qb, { group: cg, doc: 'the QP whose connection starts over' }) : null;
  const cfgIn = portGroup(m, 'cfg', MPA_TX_CFG, 'input', cg).ports;
  const errLength = m.output('err_length', 1, { group: 'Status', doc: 'sticky: a ULPDU ended elsewhere than its ULPDU_Length said' });
  m.allowUnused(s.keep!, 'the ULPDU length comes from tuser; tkeep is implied by it');

  // ---- Configuration: registered, written into the context memory the cycle after --------------
  const cfgWr = {
    valid: m.reg('cfg_wr_valid', 1, { reset: 0, doc: 'a configuration goes into tx_ctx this cycle (before a write-back)' }),
    qp: qb ? m.reg('cfg_wr_qp', qb) : null,
    ctx: m.reg('cfg_wr_ctx', MPA_TX_QP_CTX.width, { record: MPA_TX_QP_CTX, doc: "the new connection's context" }),
  };
  m.assign(cfgReady, lit(1, 1));
  // Output slots from the first FPDU's start to the first marker slot, −(seq − S0)/4 mod 128.
  const cfgMarkerOctets = m.let('cfg_marker_octets', cfgIn.s0.sub(cfgIn.seq));
  m.allowUnused(cfgMarkerOctets, 'FPDUs start 4-aligned to S0 (spec/mpa.md section 4.5): the low two bits are 0');
  m.sync(() => {
    m.set(cfgWr.valid, cfgValid);
    m.when(cfgValid, () => {
      if (cfgWr.qp) m.set(cfgWr.qp, cfgQp!);
      m.set(cfgWr.ctx, MPA_TX_QP_CTX.pack({ k: cfgMarkerOctets.slice(8, 2), markers: cfgIn.markers, crc: cfgIn.crc }));
    });
  });
  /** The configuration written this cycle is of the QP a stage holds (with one QP: any is). */
  const cfgHits = (qp: Expr | null): Expr => (cfgWr.qp && qp ? cfgWr.valid.and(cfgWr.qp.eq(qp)) : cfgWr.valid);
  const ctx = contextMemory(m, 'tx_ctx', { width: MPA_TX_QP_CTX.width, depth: Math.max(2, qps), latency: 1, doc: "each QP's framing context (mpa_tx_qp_ctx)" });

  // ---- Stage A: marker-free FPDU words -------------------------------------------------------
  const aInFpdu = m.reg('a_in_fpdu', 1, { reset: 0, doc: 'inside a ULPDU (after its first beat)' });
  const aPrev = m.reg('a_prev', 16, { doc: 'the last two octets of the previous input beat' });
  const aFlush = m.reg('a_flush', 1, { reset: 0, doc: 'one more FPDU word (the last two octets and PAD) is due' });
  const aLeft = m.reg('a_left', 17, { doc: 'FPDU octets (PAD included, CRC not) still to emit' });
  const aData = m.reg('a_data_left', 17, { doc: 'of those, octets of ULPDU_Length and ULPDU' });
  const aQp = qb ? m.reg('a_qp', qb, { doc: 'the QP of the ULPDU in stage A' }) : null;
  const aLive = m.reg('a_live', 1, { reset: 0, doc: "the ULPDU in stage A (the last taken) is of its QP's connection: no configuration of the QP since" });
  const fa = {
    valid: m.reg('fa_valid', 1, { reset: 0 }),
    data: m.reg('fa_data', 8 * W),
    words: m.reg('fa_words', wBits),
    first: m.reg('fa_first', 1),
    last: m.reg('fa_last', 1),
    qp: qb ? m.reg('fa_qp', qb) : null,
    chain: m.reg('fa_chain', 1, { doc: "the F beat's ULPDU follows its QP's previous one, of the same connection, in the pipeline" }),
    live: m.reg('fa_live', 1, { doc: "the F beat's FPDU writes its QP's marker distance back (no configuration of the QP since its first beat)" }),
  };
  const looked = m.reg('fa_looked', 1, { reset: 0, doc: "the F beat is a ULPDU's first, its QP's context read from tx_ctx last cycle" });
  const faCtxHeld = m.reg('fa_ctx_held', MPA_TX_QP_CTX.width, { record: MPA_TX_QP_CTX, doc: "the context of the F beat's ULPDU, from tx_ctx" });

  const first = m.let('a_first', aInFpdu.not());
  const len = user.ulpdu_length;
  const aLiveNow = m.let('a_live_now', aLive.and(cfgHits(aQp).not()), { doc: 'a_live, with this cycle\'s configuration' });
  // A ULPDU that follows its QP's previous one continues B1's live distance; any other looks its
  // QP's context up (the previous FPDU of its QP has passed B1 by then, or the configuration).
  const chainIn = m.let('a_chain', aQp ? s.id!.eq(aQp).and(aLiveNow) : aLiveNow, { doc: "the ULPDU follows its QP's previous one, of the same connection" });
  // FPDU octets without CRC: 2 + L + PAD, a multiple of 4.
  const fTotal = m.let('a_fpdu_octets', len.zext(17).add(lit(17, 5)).and(lit(17, 0x1fffc)));
  const leftNow = m.let('a_left_now', mux(first, fTotal, aLeft));
  const dataNow = m.let('a_data_now', mux(first, len.zext(17).add(lit(17, 2)), aData));
  const header = cat(len.slice(7, 0), len.slice(15, 8)); // lane 0 = ULPDU_Length[15:8] (big-endian)
  const low2 = m.let('a_low2', mux(first, header, aPrev));
  const shifted = cat(s.data.slice(8 * W - 17, 0), low2);
  // PAD and anything past the ULPDU is zero.
  // Compares on the input (len) and on registers, no arithmetic before them: dataNow > j.
  const dataAbove = (j: number): Expr => mux(first, bitExpr(atLeast(len, j - 1)), bitExpr(atLeast(aData, j + 1)));
  const laneOk = Array.from({ length: W }, (_, j) => dataAbove(j));
  const masked = cat(...laneOk.map((ok, j) => mux(ok, shifted.slice(8 * j + 7, 8 * j), lit(8, 0))).reverse());
  // leftNow > W; for the first beat ((L + 5) & ~3) > W, that is L ≥ W − 1.
  const moreAfter = m.let('a_more_after', mux(first, bitExpr(atLeast(len, W - 1)), bitExpr(atLeast(aLeft, W + 1))));
  // Words this beat: a full beat, or what is left (at most W octets, a multiple of 4).
  const wordsNow = m.let('a_beat_words', mux(moreAfter, lit(wBits, n), leftNow.slice(wBits + 1, 2)));

  const faReady = m.wire('fa_ready', 1, { doc: 'stage F takes the F beat' });
  const faFree = m.let('fa_free', fa.valid.not().or(faReady));
  m.assign(s.ready, aFlush.not().and(faFree));
  const take = m.let('a_take', s.valid.and(s.ready));
  ctx.lookup(s.id ?? lit(1, 0), take.and(first));
  // The last input beat holds the last ULPDU octet: the octets of ULPDU_Length and ULPDU still to
  // come (dataNow, shifted by the two header octets) end within this beat's W + 2, after its first
  // two (or it is the only beat of an empty ULPDU).
  const endsHere = m.let('a_ends_here', mux(first, bitExpr(not1(atLeast(len, W + 1))), bitExpr(and2(not1(atLeast(aData, W + 3)), atLeast(aData, 3)))));
  const lengthBad = m.let('a_length_bad', mux(s.last!, endsHere.not(), endsHere));
  const lenErr = m.reg('err_length_seen', 1, { reset: 0 });
  m.assign(errLength, lenErr);
  const flushNow = m.let('a_flush_now', aFlush.and(faFree));
  // The last two octets of the ULPDU (or of ULPDU_Length) and PAD: one word.
  const flushWord = cat(lit(8 * W - 16, 0), mux(aData.gt(lit(17, 1)), aPrev, cat(lit(8, 0), aPrev.slice(7, 0))));
  const faLoad = m.let('fa_load', faFree.and(aFlush.or(s.valid)), { doc: 'an F beat is loaded: the input taken, or the flush word' });

  // ---- Stage F: the F beat with the marker distance it starts from, decoded ---------------------
  const fb = {
    valid: m.reg('fb_valid', 1, { reset: 0 }),
    data: m.reg('fb_data', 8 * W),
    span: m.reg('fb_span', hBits, { doc: "stream words of the beat: its FPDU words, and the CRC slot on the FPDU's last" }),
    spanOh: m.reg('fb_span_oh', hw, { doc: 'bit j: span = j' }),
    spanGe: m.reg('fb_span_ge', n + 1, { doc: 'bit j: span > j' }),
    first: m.reg('fb_first', 1),
    last: m.reg('fb_last', 1),
    markers: m.reg('fb_markers', 1),
    crcOn: m.reg('fb_crc_on', 1),
    own: m.reg('fb_k_own', 1, { doc: "B1's live distance applies: not an FPDU's first beat, or the FPDU continues the previous one's QP" }),
    kStart: m.reg('fb_k_start', 7, { doc: "otherwise the distance to start from: the QP's, from tx_ctx" }),
    live: m.reg('fb_live', 1, { doc: "the FPDU writes its QP's marker distance back (no configuration of the QP since its first beat)" }),
    startEq: m.reg('fb_k_start_eq', hw, { doc: 'bit j: k_start = j' }),
    startLt: m.reg('fb_k_start_lt', n + 1, { doc: 'bit j: k_start < j + 1' }),
    qp: qb ? m.reg('fb_qp', qb) : null,
  };
  // The ULPDU's context: this cycle's read for its first beat, the one held for the others. Every
  // field read here (a view names its fields as wires on first read, outside processes).
  const faCtx = m.let('fa_ctx', mux(looked, ctx.value, faCtxHeld), { record: MPA_TX_QP_CTX, doc: "the context of the F beat's ULPDU" });
  const { k: kStart, markers: faMarkers, crc: faCrc } = MPA_TX_QP_CTX.view(faCtx, { m, prefix: 'fa_ctx' });
  const faGo = m.let('fa_go', fa.valid.and(faReady));
  const span = m.let('fa_span', fa.words.zext(hBits).add(fa.last.zext(hBits)), { doc: 'FPDU words and the CRC slot' });

  // ---- Stage B1: the marker in the beat ------------------------------------------------------------
  // Kept as the distance to the marker slot, not the phase, and decoded a beat ahead: the word
  // selects below are registers through one mux.
  const k = m.reg('mk_slot', 7, { doc: 'output slots before the next marker slot: -(seq - S0)/4 mod 128 (spec/mpa.md section 4.3)' });
  const kEq = m.reg('mk_slot_eq', hw, { doc: 'bit j: mk_slot = j' });
  const kLt = m.reg('mk_slot_lt', n + 1, { doc: 'bit j: mk_slot < j + 1' });
  const ptr = m.reg('mk_ptr', 14, { doc: "the next marker's slot counted from ULPDU_Length: FPDUPTR / 4 (0 for a leading marker)" });
  const mb = {
    valid: m.reg('mb_valid', 1, { reset: 0 }),
    data: m.reg('mb_data', 32 * hw, { doc: 'stream words and the marker, the CRC slot empty' }),
    words: m.reg('mb_words', hBits),
    wordsOh: m.reg('mb_words_oh', hw + 1, { doc: 'bit j: words = j' }),
    wordsGe: m.reg('mb_words_ge', hw, { doc: 'bit j: words > j' }),
    last: m.reg('mb_last', 1),
    crcOn: m.reg('mb_crc_on', 1),
    qp: qb ? m.reg('mb_qp', qb) : null,
  };
  const mbReady = m.wire('mb_ready', 1, { doc: 'stage B2 takes the B1 beat' });
  const mbFree = m.let('mb_free', mb.valid.not().or(mbReady));
  // The context memory's one write port is the configuration's in the cycle after it is taken: an
  // FPDU's last beat (a write-back) waits in B1 that cycle. Decided a cycle ahead: the stages'
  // ready chain takes a register, not the configuration's handshake.
  const cfgHold = m.reg('b1_cfg_hold', 1, { reset: 0, doc: "a configuration goes into tx_ctx this cycle and B1 holds an FPDU's last beat: it waits" });
  const b1Free = m.let('b1_free', mbFree.and(cfgHold.not()), { doc: 'B1 may pass its beat on' });
  const b1Go = m.let('b1_go', fb.valid.and(b1Free));
  const markersOn = fb.markers;
  const kNow = m.let('b1_k', mux(fb.own, k, fb.kStart), { doc: 'output slots before the next marker slot, at this beat' });
  const kIs = (j: number): Expr => bitExpr(j < hw ? mux(fb.own, kEq.bit(j), fb.startEq.bit(j)) : false);
  const kBelow = (j: number): Bit => (j <= 0 ? false : mux(fb.own, kLt.bit(j - 1), fb.startLt.bit(j - 1)));
  // The distance after the beat's stream words: negative (bit 7) when the marker slot is among them,
  // so a stream word follows the marker in this FPDU (RFC 5044 section 4.3: none after the CRC).
  const kLeft = m.let('b1_k_left', kNow.zext(8).sub(fb.span.zext(8)), { doc: 'mk_slot after the stream words, two’s complement' });
  const hasMarker = m.let('mk_here', markersOn.and(kLeft.bit(7)));
  const kAfter = m.let('mk_after', kLeft.slice(6, 0).sub(hasMarker.zext(7)), { doc: 'the distance to the next marker slot after this beat' });
  const wbNow = m.let('tx_ctx_write_back', b1Go.and(fb.last).and(fb.live), { doc: "the FPDU's last beat writes its QP's distance back" });
  const qpOr0 = (qp: Expr | null): Expr => qp ?? lit(1, 0);
  ctx.update(
    cfgWr.valid.or(wbNow),
    mux(cfgWr.valid, qpOr0(cfgWr.qp), qpOr0(fb.qp)),
    mux(cfgWr.valid, cfgWr.ctx, MPA_TX_QP_CTX.pack({ k: kAfter, markers: fb.markers, crc: fb.crcOn })),
  );
  // FPDUPTR: back to ULPDU_Length; 0 for a leading marker (the FPDU's first word), and then the
  // header is one slot later.
  const ptrNow = m.let('mk_ptr_now', mux(fb.first, kNow.zext(14), ptr));
  const leading = m.let('mk_leading', fb.first.and(kIs(0)));
  const ptrNext = ptrNow.add(mux(leading, lit(14, 127), lit(14, 128)));
  const fpduptr = cat(ptrNow.slice(13, 0), lit(2, 0));
  const markerWord = cat(fpduptr.slice(7, 0), fpduptr.slice(15, 8), lit(16, 0)); // 00 00 PTR_hi PTR_lo on the wire
  const fWord = (i: number): Expr => (i >= 0 && i < n ? fb.data.slice(32 * i + 31, 32 * i) : lit(32, 0));
  // Word j: the marker at its slot, the stream word before it past the slot, else its own. A word
  // past the beat's is never read (the CRC slot is F's zero word past its last).
  const b1Words = Array.from({ length: hw }, (_, j) => {
    const past = kBelow(j);
    const stream = typeof past === 'boolean' ? fWord(j) : mux(markersOn.and(past), fWord(j - 1), fWord(j));
    return mux(markersOn.and(kIs(j)), markerWord, stream);
  });

  // ---- Stage B2: the gearbox -------------------------------------------------------------------
  // Held words first, then the B1 beat's: a beat of n goes out as soon as there are n (or the
  // FPDU's end); what is left waits. "Drain" (the hold alone makes the beat: it has n words, or
  // the FPDU's end) and the count are registers, so each word's select is one register bit.
  const gb = Array.from({ length: hw }, (_, i) => m.reg(`gb_word${i}`, 32));
  const gbCount = m.reg('gb_count', hBits, { reset: 0, doc: 'words waiting in the gearbox' });
  const gbCountOh = m.reg('gb_count_oh', hw, { reset: 0, doc: 'bit j: count = j + 1' });
  const countOver = m.reg('gb_count_over', hw - n, { reset: 0, doc: 'bit j: count > n + j (n + 1 or n + 2 words: the FPDU end, or a marker and the CRC slot)' });
  const countIs = (j: number): Bit => ohAt(gbCountOh, j - 1);
  const gbEnd = m.reg('gb_end', 1, { reset: 0, doc: "the gearbox holds its FPDU's last words" });
  const drain = m.reg('gb_drain', 1, { reset: 0, doc: 'the next beat comes from the gearbox alone: it holds n words, or the FPDU end' });
  const tail = m.reg('gb_tail', 1, { reset: 0, doc: "draining the FPDU's end in one beat: the next FPDU's first B1 beat enters the gearbox" });
  const gbTake = m.reg('gb_take', 1, { reset: 1, doc: 'the gearbox takes a B1 beat this cycle (not draining, or the tail)' });
  const holdSel = m.reg('gb_hold_sel', n, { reset: 0, doc: 'bit j: output word j comes from the gearbox (draining, or count > j)' });
  const merge = m.reg('gb_merge', n, { reset: 1, doc: 'bit i: not draining and count = i: the B1 beat follows i held words' });
  const gbCrcOn = m.reg('gb_crc_on', 1);
  const gbQp = qb ? m.reg('gb_qp', qb) : null;
  const ob = {
    valid: m.reg('ob_valid', 1, { reset: 0 }),
    data: m.reg('ob_data', 8 * W),
    words: m.reg('ob_words', wBits),
    first: m.reg('ob_first', 1),
    last: m.reg('ob_last', 1),
    crcSlot: m.reg('ob_crc_slot', sBits),
    crcCount: m.reg('ob_crc_count', n + 1, { doc: 'bit k: the CRC covers k words (all but the CRC slot on the last beat)' }),
    crcOn: m.reg('ob_crc_on', 1),
    qp: qb ? m.reg('ob_qp', qb) : null,
  };
  const oFirst = m.reg('o_first', 1, { reset: 1, doc: "the next output beat is an FPDU's first" });
  const obReady = m.wire('ob_ready', 1, { doc: 'stage C takes the output beat' });
  const obFree = m.let('ob_free', ob.valid.not().or(obReady));
  m.assign(mbReady, obFree.and(gbTake));
  // Stage F's ready, fb_valid' or b1_free, as one sum of products of registers (and the output's
  // registered ready): stage A's registers all hang on it, and nested it maps as a chain of
  // small LUTs through every stage's free signal.
  const open = cfgHold.not();
  m.assign(
    faReady,
    anyOf([fb.valid.not(), open.and(mb.valid.not()), open.and(gbTake).and(ob.valid.not()), open.and(gbTake).and(obReady)]),
  );
  const inWord = (i: number): Expr | null => (i >= 0 && i < hw ? mb.data.slice(32 * i + 31, 32 * i) : null);
  const inOh = (j: number): Bit => ohAt(mb.wordsOh, j);
  const inGe = (j: number): Bit => geAt(mb.wordsGe, j);
  // t = held + B1 words (not draining: merge is the count's one-hot), as a one-hot and a thermometer.
  const tMax = n - 1 + hw;
  // Not draining the count is below n: its low bits select, a balanced tree of 2:1 muxes (4:1 a
  // LUT6), where the one-hot AND-OR over n cases maps as a chain.
  const byCount = (f: (i: number) => Bit): Expr => {
    const tree = (bit: number, base: number): Expr =>
      bit < 0 ? bitExpr(f(base)) : mux(gbCount.bit(bit), tree(bit - 1, base + 2 ** bit), tree(bit - 1, base));
    return tree(Math.log2(n) - 1, 0);
  };
  const sumOh = m.let('gb_sum_oh', vec(tMax, (j) => byCount((i) => inOh(j + 1 - i))), { doc: 'bit j: held + B1 words = j + 1 (not draining)' });
  const sumOver = m.let('gb_sum_over', vec(tMax - n, (j) => byCount((i) => inGe(n + j + 1 - i))), { doc: 'bit j: held + B1 words > n + j (not draining)' });
  const sumIs = (j: number): Bit => ohAt(sumOh, j - 1);
  /** Held + B1 words ≥ n + j (j ≥ 1): what is left after a beat of n. */
  const sumOverAt = (j: number): Bit => geAt(sumOver, j);
  const sum = m.let('gb_sum', gbCount.zext(hBits + 1).add(mb.words.zext(hBits + 1)), { doc: 'held + B1 words' });
  // Not draining, the gearbox holds fewer than n words, and every B1 beat but an FPDU's last has n
  // words or more (stage A fills every F beat but the last): held + B1 words ≥ n, a beat goes out,
  // unless the B1 beat is the FPDU's last. So whether a beat goes out, and how much is left, need no
  // comparison: only where the FPDU ends.
  // The FPDU ends in this beat: the B1 beat is its last and every word fits.
  const lastNow = m.let('gb_last_now', mb.last.and(bitExpr(not1(sumOverAt(1)))));
  const emitNow = m.let('gb_emit', drain.or(mb.valid), { doc: 'a beat goes out when stage C takes one' });
  const update = m.let('gb_update', obFree.and(emitNow));
  // What the gearbox holds after this cycle: one case each (one-hot under gb_update).
  interface Next {
    readonly sel: Expr;
    readonly is: (j: number) => Bit;
    readonly ge: (j: number) => Bit;
    readonly count: Expr;
    readonly end: Bit;
    /** count = j and no FPDU end held (default: from is and end). */
    readonly open?: (j: number) => Bit;
  }
  const after: Next[] = [
    // The FPDU end went out; the next FPDU's first B1 beat is held.
    { sel: m.let('gb_refill', drain.and(tail).and(mb.valid)), is: inOh, ge: inGe, count: mb.words, end: mb.last },
    // The FPDU end went out, nothing came.
    { sel: m.let('gb_emptied', drain.and(tail).and(mb.valid.not())), is: (j) => j === 0, ge: (j) => j <= 0, count: lit(hBits, 0), end: false },
    // n held words out (more than n were the FPDU's end, or not its end).
    {
      sel: m.let('gb_drain_n', drain.and(tail.not())),
      is: (j) => countIs(j + n),
      ge: (j) => geAt(countOver, j),
      count: gbCount.sub(lit(hBits, n)),
      end: gbEnd,
    },
    // Not draining: n out and the rest of the B1 beat held, or the FPDU's end out (then t − n ≤ 0).
    {
      sel: drain.not(),
      is: (j) => (j === 0 ? not1(sumOverAt(1)) : sumIs(j + n)),
      ge: sumOverAt,
      count: mux(bitExpr(sumOverAt(1)), sum.sub(lit(hBits + 1, n)).slice(hBits - 1, 0), lit(hBits, 0)),
      end: mb.last.and(bitExpr(sumOverAt(1))),
      // Words left (j ≥ 1) mean held + B1 words > n: the end is held exactly when the beat is the last.
      open: (j) => (j === 0 ? not1(sumOverAt(1)) : and2(mb.last.not(), sumIs(j + n))),
    },
  ];
  const nextBit = (f: (c: Next) => Bit): Expr => orCases(after.map((c) => [c.sel, f(c)] as const));
  // The output beat: held word j while draining or count > j, else B1 word j − count.
  const gbOut = m.let(
    'gb_out',
    cat(...Array.from({ length: n }, (_, j) => oneHotMux([[holdSel.bit(j), gb[j]!] as const, ...Array.from({ length: j + 1 }, (_, i) => [merge.bit(i), inWord(j - i)!] as const)])).reverse()),
    { doc: 'the output beat' },
  );
  // Not draining and n go out: B1 word j + n − count is held word j.
  const passed = (j: number): Expr => {
    const cases = Array.from({ length: n }, (_, i) => [merge.bit(i), inWord(j + n - i)] as const).filter((c): c is readonly [Expr, Expr] => c[1] !== null);
    return cases.length ? oneHotMux(cases) : lit(32, 0);
  };

  m.sync(() => {
    // Stage A. A configuration of a stage's QP ends that FPDU's write-back (an old connection's).
    m.when(faFree, () => m.set(fa.valid, 0));
    m.set(aLive, aLiveNow);
    m.set(fa.live, fa.live.and(cfgHits(fa.qp).not()));
    // An F beat is loaded from the input or, one cycle after the ULPDU's last beat, as the flush word
    // (the input waits then): the register a_flush picks which, not the ready chain.
    m.when(faLoad, () => {
      m.set(fa.valid, 1);
      m.set(fa.data, mux(aFlush, flushWord, masked));
      m.set(fa.words, mux(aFlush, lit(wBits, 1), wordsNow));
      m.set(fa.first, first.and(aFlush.not()));
      m.set(fa.last, aFlush.or(s.last!.and(moreAfter.not())));
      m.set(fa.live, aLiveNow.or(first.and(aFlush.not())));
      if (aQp) m.set(fa.qp!, mux(first.and(aFlush.not()), s.id!, aQp));
    });
    m.when(take, () => {
      m.set(fa.chain, chainIn);
      if (aQp) m.when(first, () => m.set(aQp, s.id!));
      m.when(first, () => m.set(aLive, 1));
      m.set(aPrev, s.data.slice(8 * W - 1, 8 * W - 16));
      m.set(aLeft, leftNow.sub(lit(17, W)));
      m.set(aData, mux(dataAbove(W), dataNow.sub(lit(17, W)), lit(17, 0)));
      m.set(aInFpdu, s.last!.not());
      m.set(aFlush, s.last!.and(moreAfter));
      m.when(lengthBad, () => m.set(lenErr, 1));
    });
    m.when(flushNow, () => m.set(aFlush, 0));
    m.set(looked, take.and(first));
    m.when(looked, () => m.set(faCtxHeld, ctx.value));

    // Stage F.
    m.when(faReady, () => m.set(fb.valid, fa.valid));
    m.set(cfgHold, cfgValid.and(mux(faGo, fa.last, fb.last)));
    m.set(fb.live, fb.live.and(cfgHits(fb.qp).not()));
    m.when(faGo, () => {
      m.set(fb.data, fa.data);
      m.set(fb.span, span);
      m.set(fb.spanOh, vec(hw, (j) => span.eq(lit(hBits, j))));
      m.set(fb.spanGe, vec(n + 1, (j) => span.gt(lit(hBits, j))));
      m.set(fb.first, fa.first);
      m.set(fb.last, fa.last);
      m.set(fb.markers, faMarkers);
      m.set(fb.crcOn, faCrc);
      m.set(fb.own, fa.first.not().or(fa.chain));
      m.set(fb.live, fa.live.and(cfgHits(fa.qp).not()));
      m.set(fb.kStart, kStart);
      m.set(fb.startEq, vec(hw, (j) => kStart.eq(lit(7, j))));
      m.set(fb.startLt, vec(n + 1, (j) => kStart.lt(lit(7, j + 1))));
      if (fb.qp) m.set(fb.qp, fa.qp!);
    });

    // Stage B1.
    m.when(mbFree, () => m.set(mb.valid, b1Go));
    m.when(b1Go, () => {
      m.set(mb.data, cat(...[...b1Words].reverse()));
      m.set(mb.words, fb.span.add(hasMarker.zext(hBits)));
      m.set(mb.wordsOh, vec(hw + 1, (j) => mux(hasMarker, bitExpr(ohAt(fb.spanOh, j - 1)), bitExpr(ohAt(fb.spanOh, j)))));
      m.set(mb.wordsGe, vec(hw, (j) => or2(geAt(fb.spanGe, j + 1), and2(hasMarker, ohAt(fb.spanOh, j)))));
      m.set(mb.last, fb.last);
      m.set(mb.crcOn, fb.crcOn);
      if (mb.qp) m.set(mb.qp, fb.qp!);
      m.set(k, kAfter);
      // mk_after is at most n + 1 only where b1_k_left is not negative (else it is 127 − (n + 1) or more).
      m.set(kEq, vec(hw, (j) => kLeft.eq(lit(8, j))));
      m.set(kLt, vec(n + 1, (j) => kLeft.lt(lit(8, j + 1))));
      m.set(ptr, mux(hasMarker, ptrNext, ptrNow));
    });

    // Stage B2.
    m.when(obFree, () => m.set(ob.valid, emitNow));
    m.when(obFree.and(emitNow), () => {
      m.set(ob.data, gbOut);
      m.set(ob.first, oFirst);
      const last = mux(drain, tail, lastNow);
      m.set(ob.last, last);
      m.set(oFirst, last);
      m.set(ob.words, mux(drain, mux(tail, gbCount.slice(wBits - 1, 0), lit(wBits, n)), mux(lastNow, sum.slice(wBits - 1, 0), lit(wBits, n))));
      m.set(ob.crcSlot, mux(drain, gbCount.zext(hBits + 1), sum).sub(lit(hBits + 1, 1)).slice(sBits - 1, 0));
      m.set(
        ob.crcCount,
        vec(n + 1, (j) => mux(drain, mux(tail, bitExpr(countIs(j + 1)), lit(1, j === n ? 1 : 0)), mux(lastNow, bitExpr(sumIs(j + 1)), lit(1, j === n ? 1 : 0)))),
      );
      m.set(ob.crcOn, mux(drain, gbCrcOn, mb.crcOn));
      if (ob.qp) m.set(ob.qp, mux(drain, gbQp!, mb.qp!));
    });
    m.when(update, () => {
      for (let j = 0; j < hw; j++) {
        const drained = mux(tail, inWord(j)!, gb[j + n] ?? lit(32, 0));
        m.set(gb[j]!, mux(drain, drained, passed(j)));
      }
      m.set(gbCount, oneHotMux(after.map((c) => [c.sel, c.count] as const)));
      m.set(gbCountOh, vec(hw, (j) => nextBit((c) => c.is(j + 1))));
      m.set(countOver, vec(hw - n, (j) => nextBit((c) => c.ge(n + 1 + j))));
      m.set(gbEnd, nextBit((c) => c.end));
      m.set(drain, nextBit((c) => or2(c.end, c.ge(n))));
      m.set(tail, nextBit((c) => and2(c.end, not1(c.ge(n + 1)))));
      m.set(gbTake, nextBit((c) => or2(not1(or2(c.end, c.ge(n))), and2(c.end, not1(c.ge(n + 1))))));
      m.set(holdSel, vec(n, (j) => nextBit((c) => or2(c.end, c.ge(j + 1)))));
      m.set(merge, vec(n, (i) => nextBit((c) => (c.open ? c.open(i) : and2(not1(c.end), c.is(i))))));
    });
    m.when(mbReady.and(mb.valid), () => {
      m.set(gbCrcOn, mb.crcOn);
      if (gbQp) m.set(gbQp, mb.qp!);
    });
  });

  // ---- Stage C: CRC over the output words (the library's CRC component), inserted in its slot -----
  // The beat travels beside the CRC as the component's tag (its delay line): the register after the
  // FPDU's last beat comes out with that beat. Every stage moves with `advance`, the output skid
  // buffer's registered ready, so m_axis_tready reaches no logic combinationally.
  const advance = m.wire('c_advance', 1, { doc: 'stage C and the CRC pipeline move this cycle' });
  m.assign(obReady, advance);
  const cTake = m.let('c_take', ob.valid.and(advance));
  const beat = OB_BEAT(W, qb).pack({ data: ob.data, words: ob.words, last: ob.last, crc_slot: ob.crcSlot, crc_on: ob.crcOn, ...((ob.qp ? { qp: ob.qp } : {}) as { qp: Expr }) });
  const crc = crcPipeline(m, 'c_crc', { params, bytes: W, unit: 4, inputRegister: true, advance }, { valid: cTake, data: ob.data, count: { oneHot: ob.crcCount }, start: ob.first, tag: beat });
  const d = OB_BEAT(W, qb).view(crc.tag!, { m, prefix: 'c_beat' });
  const crcValue = m.let('c_crc_value', mux(d.crc_on, crc.crc.xor(lit(32, params.xorOut >>> 0)), lit(32, 0)));
  // Words past the beat's are zero (the gearbox leaves whatever it held there).
  const kept = Array.from({ length: n }, (_, i) => d.words.gt(lit(wBits, i)));
  const withCrc = cat(
    ...Array.from({ length: n }, (_, i) => mux(d.last.and(d.crc_slot.eq(lit(sBits, i))), crcValue, mux(kept[i]!, d.data.slice(32 * i + 31, 32 * i), lit(32, 0)))).reverse(),
  );
  const keepBits = cat(...kept.map((k) => k.repeat(4)).reverse());
  const outQp = qb ? [d.qp] : [];
  const out = pipelineRegister(m, 'out', { valid: crc.valid, data: cat(...outQp, d.last, keepBits, withCrc) }, { skid: true, doc: 'an FPDU beat with its CRC' });
  m.assign(advance, out.ready);
  m.assign(o.data, out.out.data.slice(8 * W - 1, 0));
  m.assign(o.keep!, out.out.data.slice(9 * W - 1, 8 * W));
  m.assign(o.last!, out.out.data.bit(9 * W));
  if (o.id) m.assign(o.id, out.out.data.slice(9 * W + qb, 9 * W + 1));
  m.assign(o.valid, out.out.valid);
  m.assign(out.out.ready, o.ready);
  return m.build();
}
