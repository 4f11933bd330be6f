import { CRC32C, type CrcParams } from '../../ts-model/crc32c';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { contextMemory } from '../lib/context';
import { crcPipeline } from '../lib/crc';
import { oneHotMux } from '../lib/onehot';
import { type FieldDef, record } from '../lib/record';
import { MPA_TX_CTX } from './records';
import { indexBits } from '../lib/ram';
import { pipelineRegister } from '../lib/stage';

/**
 * MPA transmit (RFC 5044; spec/mpa.md §2–§4) for one stream at one input beat per cycle:
 * ULPDUs in, FPDUs out as the TCP payload, one FPDU per output packet (one TCP segment each).
 *
 * s_axis_tuser, sampled on the first beat of each ULPDU: the QP's framing context, the MPA_TX_CTX
 * record (ULPDU_Length, low 9 bits of the FPDU's sequence number and of S0, markers, CRC, and
 * `cont`: the FPDU follows the previous one in the TCP stream, so its sequence number is where
 * that one ended and the seq field is ignored; a QP's framing context then needs only the first
 * FPDU's sequence number, the next ones keep the marker phase here).
 * s_axis_tkeep is all ones but on the tlast beat (2^k − 1 there; 0 for an empty ULPDU).
 *
 * Three stages, each one beat per cycle:
 *   A  prepends ULPDU_Length (2 octets: the data shift by two lanes), zeroes PAD, and emits the
 *      marker-free FPDU as 32-bit words (everything in MPA is 4-aligned relative to S0, §4.5);
 *   B  a word gearbox that inserts a marker wherever (seq − S0)/4 ≡ 0 mod 128 (at most one per
 *      beat for W ≤ 64), with FPDUPTR pointing back at ULPDU_Length (0 for a leading marker), and
 *      reserves the CRC word after the last FPDU word (so a marker lands before it, case d);
 *   C  runs the CRC over the output words, markers included (leadMarkerInCrc, §4.6), through the
 *      CRC component (hdl-gen/lib/crc.ts; the beat waits beside it, three cycles), and puts it in
 *      its slot, least-significant octet first; the output is a skid buffer.
 * Input stalls only for the words that are inserted (markers, the header's extra word).
 * err_length (sticky) flags a ULPDU whose tlast does not fall where its ULPDU_Length says.
 *
 * Shared by QPs (qps > 1): s_axis_tid names the QP of a ULPDU and m_axis_tid that of its FPDU, and
 * ULPDUs of different QPs may follow each other with no gap. A QP's marker phase (the one word of
 * state between two of its FPDUs) is kept per QP in a context memory (hdl-gen/lib/context.ts):
 * written back as an FPDU leaves stage B, looked up as the next ULPDU's first beat enters stage A,
 * and taken when that FPDU enters stage B. Hazards cost no cycle: the FPDU right before it in stage
 * B is either the same QP's (its live phase continues, as with one QP) or another QP's, and then
 * the same QP's previous FPDU left stage B before this lookup (the gearbox holds one FPDU, the F
 * register one beat), so the memory has it.
 */
/** s_axis_tuser: the MPA_TX_CTX record (hdl-gen/blocks/records.ts). */
export const MPA_TX_TUSER_BITS = MPA_TX_CTX.width;

/** A beat of stage B's output, as it rides beside the CRC: its words, where the CRC goes. */
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
  const bBits = Math.log2(2 * n) + 1; // 0..2n words in the gearbox
  const m = new ModuleBuilder(
    mpaTxName(W, qps),
    `MPA transmit: ULPDUs in, FPDUs out (ULPDU_Length, ULPDU, PAD, markers, CRC-32C),\n` +
      `${W} octets per beat, one input beat per cycle. RFC 5044 framing (spec/mpa.md sections 2-4).\n` +
      's_axis_tuser on the first beat of a ULPDU: the framing context (record mpa_tx_ctx; cont: the FPDU\n' +
      'continues where the previous one ended, its seq field ignored).\n' +
      'One FPDU per m_axis packet (tlast at the CRC).' +
      (qb ? `\nShared by ${qps} QPs: tid names the QP; each QP's marker phase is kept in a context memory.` : ''),
    { bytes: W, ...(qb && { qps }) },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const s = sinkStream({ bytes: W, user: MPA_TX_TUSER_BITS, id: qb }).declare(m, 's_axis', 'AXI4-Stream input: ULPDUs (s_axis)', MPA_TX_CTX);
  const o = sourceStream({ bytes: W, id: qb }).declare(m, 'm_axis', 'AXI4-Stream output: FPDUs, the TCP payload (m_axis)');
  const user = MPA_TX_CTX.view(s.user!, { m, prefix: 'ctx' });
  const errLength = m.output('err_length', 1, { group: 'Status', doc: 'sticky: a ULPDU ended elsewhere than its ULPDU_Length said' });
  m.allowUnused(s.keep!, 'the ULPDU length comes from tuser; tkeep is implied by it');

  // ---- Stage A: marker-free FPDU words -------------------------------------------------------
  const aInFpdu = m.reg('a_in_fpdu', 1, { reset: 0, doc: 'inside a ULPDU (after its first beat)' });
  const aPrev = m.reg('a_prev', 16, { doc: 'the last two octets of the previous input beat' });
  const aFlush = m.reg('a_flush', 1, { reset: 0, doc: 'one more FPDU word (the last two octets and PAD) is due' });
  const aLeft = m.reg('a_left', 17, { doc: 'FPDU octets (PAD included, CRC not) still to emit' });
  const aData = m.reg('a_data_left', 17, { doc: 'of those, octets of ULPDU_Length and ULPDU' });
  const aCtx = m.reg('a_ctx', 10, { doc: '{continue, CRC, markers, word phase of the FPDU start}' });
  const fa = {
    valid: m.reg('fa_valid', 1, { reset: 0 }),
    data: m.reg('fa_data', 8 * W),
    words: m.reg('fa_words', wBits),
    first: m.reg('fa_first', 1),
    last: m.reg('fa_last', 1),
    ctx: m.reg('fa_ctx', 10),
  };
  // Shared: the QP of the ULPDU in stage A and of the F beat, and the marker phase looked up for it.
  const shared = qb
    ? {
        aQp: m.reg('a_qp', qb, { doc: 'the QP of the ULPDU in stage A' }),
        faQp: m.reg('fa_qp', qb),
        phase: contextMemory(m, 'mk_ctx', { width: 7, depth: qps, latency: 1, doc: "each QP's output slots before its next marker slot, after its last FPDU" }),
        looked: m.reg('fa_k_looked', 1, { reset: 0, doc: "the F beat is a ULPDU's first, its QP's phase read from mk_ctx last cycle" }),
        faK: m.reg('fa_k', 7, { doc: "the F beat's QP's phase, from mk_ctx" }),
      }
    : null;

  const first = m.let('a_first', aInFpdu.not());
  const len = user.ulpdu_length;
  // Word phase (seq − S0)/4 mod 128: the FPDU start is 4-aligned to S0.
  const phaseOctets = m.let('a_phase_octets', user.seq.sub(user.s0));
  m.allowUnused(phaseOctets, 'FPDUs start 4-aligned to S0 (spec/mpa.md section 4.5): the low two bits are 0');
  const ctxIn = m.let('a_ctx_in', cat(user.cont, user.crc, user.markers, phaseOctets.slice(8, 2)));
  // FPDU octets without CRC: 2 + L + PAD, a multiple of 4.
  const fTotal = m.let('a_fpdu_octets', len.zext(17).add(lit(17, 5)).and(lit(17, 0x1fffc)));
  const leftNow = m.let('a_left_now', mux(first, fTotal, aLeft));
  const dataNow = m.let('a_data_now', mux(first, len.zext(17).add(lit(17, 2)), aData));
  const header = cat(len.slice(7, 0), len.slice(15, 8)); // lane 0 = ULPDU_Length[15:8] (big-endian)
  const low2 = m.let('a_low2', mux(first, header, aPrev));
  const shifted = cat(s.data.slice(8 * W - 17, 0), low2);
  // PAD and anything past the ULPDU is zero.
  const laneOk = Array.from({ length: W }, (_, j) => dataNow.gt(lit(17, j)));
  const masked = cat(...laneOk.map((ok, j) => mux(ok, shifted.slice(8 * j + 7, 8 * j), lit(8, 0))).reverse());
  const moreAfter = m.let('a_more_after', leftNow.gt(lit(17, W)));
  // Words this beat: a full beat, or what is left (at most W octets, a multiple of 4).
  const wordsNow = m.let('a_beat_words', mux(moreAfter, lit(wBits, n), leftNow.slice(wBits + 1, 2)));

  const faReady = m.wire('fa_ready', 1, { doc: 'stage B takes the F beat' });
  const faFree = m.let('fa_free', fa.valid.not().or(faReady));
  m.assign(s.ready, aFlush.not().and(faFree));
  const take = m.let('a_take', s.valid.and(s.ready));
  shared?.phase.lookup(s.id!, take.and(first));
  // The last input beat holds the last ULPDU octet: the octets of ULPDU_Length and ULPDU still to
  // come (dataNow, shifted by the two header octets) end within this beat's W + 2, after its first
  // two (or it is the only beat of an empty ULPDU).
  const endsHere = m.let('a_ends_here', dataNow.le(lit(17, W + 2)).and(dataNow.gt(lit(17, 2)).or(first)));
  const lengthBad = m.let('a_length_bad', mux(s.last!, endsHere.not(), endsHere));
  const lenErr = m.reg('err_length_seen', 1, { reset: 0 });
  m.assign(errLength, lenErr);
  const flushNow = m.let('a_flush_now', aFlush.and(faFree));

  // ---- Stage B: the word gearbox with marker insertion ----------------------------------------
  const gb = Array.from({ length: 2 * n }, (_, i) => m.reg(`gb_word${i}`, 32));
  const gbCount = m.reg('gb_count', bBits, { reset: 0, doc: 'FPDU words waiting in the gearbox' });
  const gbActive = m.reg('gb_active', 1, { reset: 0, doc: 'an FPDU is passing through stage B' });
  const gbAll = m.reg('gb_all_in', 1, { doc: "the FPDU's last word is in the gearbox" });
  const gbCtx = m.reg('gb_ctx', 2, { doc: '{CRC, markers} of the FPDU in stage B' });
  const gbQp = shared && m.reg('gb_qp', qb, { doc: 'the QP of the FPDU in stage B (or of the last one)' });
  // Kept as the distance to the marker, not the phase, so no subtraction precedes the gearbox.
  const k = m.reg('mk_slot', 7, { doc: 'output slots before the next marker slot: -(seq - S0)/4 mod 128 (spec/mpa.md section 4.3)' });
  const oIdx = m.reg('o_idx', 15, { doc: 'words of this FPDU already output (markers included)' });
  const oLead = m.reg('o_lead', 1, { doc: 'this FPDU began with a leading marker' });
  const ob = {
    valid: m.reg('ob_valid', 1, { reset: 0 }),
    data: m.reg('ob_data', 8 * W),
    words: m.reg('ob_words', wBits),
    first: m.reg('ob_first', 1),
    last: m.reg('ob_last', 1),
    crcSlot: m.reg('ob_crc_slot', sBits),
    crcWords: m.reg('ob_crc_words', wBits, { doc: 'words the CRC covers: all but the CRC slot on the last beat' }),
    crcOn: m.reg('ob_crc_on', 1),
    qp: gbQp && m.reg('ob_qp', qb),
  };
  const obReady = m.wire('ob_ready', 1, { doc: 'stage C takes the output beat' });
  const obFree = m.let('ob_free', ob.valid.not().or(obReady));
  const markersOn = gbCtx.bit(0);
  const kInBeat = m.let('mk_in_beat', markersOn.and(k.lt(lit(7, n))));
  const kSlot = k.slice(sBits - 1, 0);
  // Stream words left: the FPDU words in the gearbox, plus the CRC word once all are in.
  const remaining = m.let('gb_remaining', gbCount.zext(bBits + 1).add(gbAll.zext(bBits + 1)));
  // A marker goes in only if a stream word follows it in this FPDU: one in the gearbox past the
  // slot, or any still to come (not all in: at least the CRC word follows). Without the second
  // case a beat short of words before the slot would leave half empty in mid-FPDU.
  const cw = Math.max(7, bBits + 1);
  const hasMarker = m.let('mk_here', kInBeat.and(gbAll.not().or(remaining.zext(cw).gt(k.zext(cw)))));
  const need = m.let('gb_need', mux(kInBeat, lit(bBits + 1, n - 1), lit(bBits + 1, n)));
  const emit = m.let('gb_emit', gbActive.and(obFree).and(gbAll.or(gbCount.zext(bBits + 1).ge(need))));
  // Every stream word left fits in this beat beside the marker (remaining + marker ≤ n). Then the
  // beat takes them all: remaining + marker words, the gearbox's FPDU words, and the CRC word if
  // all are in. Otherwise n words, n − marker of them from the gearbox. Each case is a value
  // of registers or a choice between two, never arithmetic on the marker decision.
  const fits = m.let('gb_fits', mux(hasMarker, remaining.le(lit(bBits + 1, n - 1)), remaining.le(lit(bBits + 1, n))));
  const outWords = m.let('gb_out_words', mux(fits, remaining.add(hasMarker.zext(bBits + 1)).slice(wBits - 1, 0), lit(wBits, n)));
  // The CRC word went out this beat if every stream word did.
  const crcOut = m.let('gb_crc_out', gbAll.and(fits));
  const leftOver = mux(hasMarker, gbCount.sub(lit(bBits, n - 1)), gbCount.sub(lit(bBits, n)));
  // FPDUPTR: back to ULPDU_Length; 0 for a leading marker (the FPDU's first word).
  const leading = m.let('mk_leading', oIdx.eq(0).and(k.eq(0)));
  const hdrIdx = mux(oLead, lit(15, 1), lit(15, 0));
  const ptrWords = m.let('mk_ptr_words', oIdx.add(k.zext(15)).sub(hdrIdx));
  m.allowUnused(ptrWords, 'FPDUPTR is 16 bits; MULPDU keeps an FPDU far below 64 KiB (spec/mpa.md section 5)');
  const fpduptr = m.let('mk_fpduptr', mux(leading, lit(16, 0), cat(ptrWords.slice(13, 0), lit(2, 0))));
  const markerWord = cat(fpduptr.slice(7, 0), fpduptr.slice(15, 8), lit(16, 0)); // 00 00 PTR_hi PTR_lo on the wire
  const slots: Expr[] = [];
  for (let i = 0; i < n; i++) {
    // Slot i comes before the marker (or there is none); the last slot never comes before it.
    const beforeMarker = i === n - 1 ? hasMarker.not() : kSlot.gt(lit(sBits, i)).or(hasMarker.not());
    const src = i === 0 ? gb[0]! : mux(beforeMarker, gb[i]!, gb[i - 1]!);
    const isMarker = hasMarker.and(kSlot.eq(lit(sBits, i)));
    // Past the FPDU's words: the CRC slot (filled in stage C) or nothing.
    const streamIdx = i === 0 ? lit(bBits, 0) : mux(beforeMarker, lit(bBits, i), lit(bBits, i - 1));
    const isFpduWord = streamIdx.lt(gbCount);
    slots.push(mux(isMarker, markerWord, mux(isFpduWord, src, lit(32, 0))));
  }
  const crcSlot = m.let('gb_crc_slot', outWords.sub(1).slice(sBits - 1, 0));
  // Room for an F beat after this cycle's output.
  const countAfter = m.let('gb_count_after', mux(emit, mux(fits, lit(bBits, 0), leftOver), gbCount));
  const fpduDone = m.let('gb_fpdu_done', emit.and(crcOut));
  // Room: count_after + F words ≤ 2n, with count_after one of three values of gbCount (0 always
  // has room), so the sum comes from registers and the decision only picks a comparison.
  const cb = bBits + 1;
  const withF = m.let('gb_count_with_f', gbCount.zext(cb).add(fa.words.zext(cb)));
  const roomIfLeft = mux(hasMarker, withF.le(lit(cb, 3 * n - 1)), withF.le(lit(cb, 3 * n)));
  const roomFor = m.let('gb_room', mux(emit, fits.or(roomIfLeft), withF.le(lit(cb, 2 * n))));
  /** count_after = c, as a choice between decodes of gbCount (never a decode of a computed count). */
  const countAfterIs = (c: number): Expr => mux(emit, mux(fits, lit(1, c === 0 ? 1 : 0), mux(hasMarker, gbCount.eq(lit(bBits, c + n - 1)), gbCount.eq(lit(bBits, c + n)))), gbCount.eq(lit(bBits, c)));
  /** The gearbox gives up c FPDU words this beat (emitting). */
  const consumedIs = (c: number): Expr => emit.and(mux(fits, gbCount.eq(lit(bBits, c)), c === n ? hasMarker.not() : c === n - 1 ? hasMarker : lit(1, 0)));
  // A new FPDU enters only when the previous one is out (or leaves this cycle).
  const kAfter = m.let('mk_after', k.sub(outWords.zext(7)), { doc: 'the distance to the next marker after this output beat' });
  shared?.phase.update(fpduDone, gbQp!, kAfter);
  const faAccept = m.let('fa_accept', fa.valid.and(roomFor).and(mux(fa.first, gbActive.not().or(fpduDone), gbActive.and(fpduDone.not()))));
  m.assign(faReady, faAccept);

  m.sync(() => {
    // Stage A.
    m.when(faFree, () => m.set(fa.valid, 0));
    m.when(take, () => {
      m.set(fa.valid, 1);
      m.set(fa.data, masked);
      m.set(fa.words, wordsNow);
      m.set(fa.first, first);
      m.set(fa.last, s.last!.and(moreAfter.not()));
      m.set(fa.ctx, mux(first, ctxIn, aCtx));
      if (shared) {
        m.set(shared.faQp, mux(first, s.id!, shared.aQp));
        m.when(first, () => m.set(shared.aQp, s.id!));
      }
      m.set(aPrev, s.data.slice(8 * W - 1, 8 * W - 16));
      m.set(aLeft, leftNow.sub(lit(17, W)));
      m.set(aData, mux(dataNow.gt(lit(17, W)), dataNow.sub(lit(17, W)), lit(17, 0)));
      m.set(aInFpdu, s.last!.not());
      m.set(aFlush, s.last!.and(moreAfter));
      m.when(first, () => m.set(aCtx, ctxIn));
      m.when(lengthBad, () => m.set(lenErr, 1));
    });
    m.when(flushNow, () => {
      // The last two octets of the ULPDU (or of ULPDU_Length) and PAD: one word.
      m.set(fa.valid, 1);
      m.set(fa.data, cat(lit(8 * W - 16, 0), mux(aData.gt(lit(17, 1)), aPrev, cat(lit(8, 0), aPrev.slice(7, 0)))));
      m.set(fa.words, lit(wBits, 1));
      m.set(fa.first, 0);
      m.set(fa.last, 1);
      m.set(fa.ctx, aCtx);
      if (shared) m.set(shared.faQp, shared.aQp);
      m.set(aFlush, 0);
    });
    if (shared) {
      m.set(shared.looked, take.and(first));
      m.when(shared.looked, () => m.set(shared.faK, shared.phase.value));
    }

    // Stage B.
    m.when(obFree, () => m.set(ob.valid, 0));
    m.when(emit, () => {
      m.set(ob.valid, 1);
      m.set(ob.data, cat(...[...slots].reverse()));
      m.set(ob.words, outWords);
      m.set(ob.first, oIdx.eq(0));
      m.set(ob.last, crcOut);
      m.set(ob.crcSlot, crcSlot);
      m.set(ob.crcWords, mux(crcOut, crcSlot.zext(wBits), outWords));
      m.set(ob.crcOn, gbCtx.bit(1));
      if (ob.qp) m.set(ob.qp, gbQp!);
      m.set(k, kAfter);
      m.set(oIdx, oIdx.add(outWords.zext(15)));
      m.when(leading.and(hasMarker), () => m.set(oLead, 1));
      m.when(crcOut, () => m.set(gbActive, 0));
    });
    // Shift out what was consumed, then append an accepted F beat. Both are one-hot AND-ORs (the
    // consumed count is one value; an appended word has one source), not priority chains of up
    // to 2n + 1 muxes.
    for (let i = 0; i < 2 * n; i++) {
      const shifts = Array.from({ length: Math.min(n, 2 * n - 1 - i) + 1 }, (_, c) => [consumedIs(c), gb[i + c]!] as const);
      const shifted = oneHotMux(shifts, gb[i]!);
      // Words of an accepted F beat land at count_after .. count_after + words − 1.
      const appends = Array.from({ length: Math.min(n, i + 1) }, (_, j) => [countAfterIs(i - j).and(fa.words.gt(lit(wBits, j))), fa.data.slice(32 * j + 31, 32 * j)] as const);
      const appended = appends.map(([here]) => here).reduce((a, b) => a.or(b));
      m.set(gb[i]!, mux(faAccept.and(appended), oneHotMux(appends), shifted));
    }
    m.set(gbCount, mux(faAccept, countAfter.add(fa.words.zext(bBits)), countAfter));
    m.when(faAccept, () => {
      m.set(gbAll, fa.last);
      m.when(fa.first, () => {
        m.set(gbActive, 1);
        m.set(gbCtx, fa.ctx.slice(8, 7));
        // Continue: k already holds the distance after the previous FPDU (updated by its last emit)
        // if that was this QP's; another QP's FPDU before it: this QP's phase from mk_ctx.
        const fromSeq = lit(7, 0).sub(fa.ctx.slice(6, 0));
        if (shared) {
          m.set(gbQp!, shared.faQp);
          const stored = mux(shared.looked, shared.phase.value, shared.faK);
          m.when(fa.ctx.bit(9).not().or(shared.faQp.ne(gbQp!)), () => m.set(k, mux(fa.ctx.bit(9), stored, fromSeq)));
        } else m.when(fa.ctx.bit(9).not(), () => m.set(k, fromSeq));
        m.set(oIdx, 0);
        m.set(oLead, 0);
      });
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
  const crc = crcPipeline(m, 'c_crc', { params, bytes: W, unit: 4, inputRegister: false, advance }, { valid: cTake, data: ob.data, count: ob.crcWords, start: ob.first, tag: beat });
  const d = OB_BEAT(W, qb).view(crc.tag!, { m, prefix: 'c_beat' });
  const crcValue = m.let('c_crc_value', mux(d.crc_on, crc.crc.xor(lit(32, params.xorOut >>> 0)), lit(32, 0)));
  const withCrc = cat(
    ...Array.from({ length: n }, (_, i) => mux(d.last.and(d.crc_slot.eq(lit(sBits, i))), crcValue, d.data.slice(32 * i + 31, 32 * i))).reverse(),
  );
  const keepBits = cat(...Array.from({ length: n }, (_, i) => d.words.gt(lit(wBits, i)).repeat(4)).reverse());
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
