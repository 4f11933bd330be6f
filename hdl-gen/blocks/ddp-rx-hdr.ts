import { thermometerCount } from '../lib/keep';
import { anyOf, priorityMux } from '../lib/onehot';
import { DDP_VERSION, DdpFlag, TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import {
  ATOMIC_REQUEST_HEADER_SIZE,
  ATOMIC_RESPONSE_HEADER_SIZE,
  IMMEDIATE_DATA_SIZE,
  Opcode,
  RDMAP_VERSION,
  READ_REQUEST_HEADER_SIZE,
  RdmapCtrl,
  TERM_SEGMENT_LENGTH_SIZE,
  TERMINATE_HEADER_SIZE,
  TermCtrl,
} from '../../ts-model/rdmap/constants';
import { DdpError, LlpError, RdmapError, type ErrorCode } from '../../ts-model/terminate-codes';
import { Expr, cat, lit, mux } from '../core/expr';
import { DDP_TAGGED, DDP_UNTAGGED, type WireField } from '../../ts-model/wire/layouts';
import { rnicNames } from './names';
import { DDP_RX_DESC } from './records';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';

/**
 * The first stage of the receive path: DDP/RDMAP header decoding and the header checks H1–H7 of
 * ts-model/rnic/header-checks.ts (`checkHeader`; spec/ddp-rdmap.md §5.1), for a datapath of W
 * octets (a power of two, 4..64).
 *
 * Input: one ULPDU per s_axis packet, as mpa_rx_w<W> outputs it (every beat full but the last,
 * whose tkeep is 2^k − 1; a zero-length ULPDU is one beat with tkeep 0). Its tuser verdict is not
 * taken: the MPA verdict is the MPA layer's, and this stage checks whatever octets it is given.
 *
 * Outputs:
 * - m_desc: one descriptor per ULPDU (layout `DDP_RX_DESC`), after the ULPDU's last beat (H1, H6
 *   and H7 need its length). The first 70 octets (the untagged header and the largest RDMAP part,
 *   the 52-octet Atomic Request or the longest Terminate) are caught in a buffer; the checks run on
 *   it and the registered length the cycle after tlast is accepted (a check stage, so no length
 *   compare sits behind the tkeep decode), and the next ULPDU's beats wait only while that
 *   descriptor cannot move to m_desc.
 * - m_axis: the ULP data of every ULPDU that passes and whose opcode may carry data (Write, Read
 *   Response, the four Sends), octets after the DDP header, realigned to lane 0, one packet per
 *   ULPDU; none when it has no such octets (descriptor has_payload = 0). Opcodes with an RDMAP
 *   part and no data (Read Request, Terminate, Immediate, Atomics) send nothing on m_axis: their
 *   whole RDMAP part is the descriptor's `rdmap` field (and `ulpdu_len` − 18 says how much of it).
 *   ULPDUs that fail send nothing on m_axis. `segment.payload` of the model is m_axis for the
 *   first group, `rdmap[0 .. ulpdu_len − 18)` for the second.
 * Payload beats leave one cycle after their input beat; the descriptor two cycles after the
 * ULPDU's last input beat (one for the capture, one for the checks), so a consumer must not rely
 * on an order between the two ports (the residual flush beat may come before or after the
 * descriptor). s_axis_tready depends on m_axis_tready and m_desc_tready combinationally (output
 * registers without skid buffers). cfg_rfc7306 is taken with each ULPDU's first beat (a block
 * shared by QPs gives each ULPDU its QP's); ULPDU lengths are counted in 16 bits (MPA's
 * ULPDU_Length).
 *
 * Rate: one input beat per cycle, back-to-back ULPDUs included, at every width. A ULPDU whose last
 * beat holds more data octets than the header offset (14 or 18 mod W) leaves one more output beat
 * (the residual flush); it goes out with the next ULPDU's first beat, which at W <= 8 never holds
 * data and at W >= 16 sends nothing itself unless it is a whole one-beat ULPDU with data, whose
 * beat then waits in the residual register and is flushed with the next input beat.
 */

/** Octets of the ULPDU start the descriptor holds: the untagged header and the largest RDMAP part. */
export const DDP_RX_CAPTURE = UNTAGGED_HEADER_SIZE + ATOMIC_REQUEST_HEADER_SIZE;
/** The longest Terminate RDMAP part (D and R set, untagged copy): fits in the capture too. */
const TERMINATE_MAX = TERMINATE_HEADER_SIZE + TERM_SEGMENT_LENGTH_SIZE + UNTAGGED_HEADER_SIZE + READ_REQUEST_HEADER_SIZE;
if (UNTAGGED_HEADER_SIZE + TERMINATE_MAX > DDP_RX_CAPTURE) throw new Error('Terminate does not fit the capture');

/** The descriptor of m_desc_tdata: the DDP_RX_DESC record (hdl-gen/blocks/records.ts). */
export { DDP_RX_DESC } from './records';
export const DDP_RX_DESC_BITS = DDP_RX_DESC.width;

/** Octets of RDMAP part an untagged opcode needs (0: data allowed), as in checkHeader. */
const FIXED: ReadonlyArray<readonly [keyof typeof Opcode, number]> = [
  ['READ_REQUEST', READ_REQUEST_HEADER_SIZE],
  ['TERMINATE', TERMINATE_HEADER_SIZE],
  ['IMMEDIATE', IMMEDIATE_DATA_SIZE],
  ['IMMEDIATE_SE', IMMEDIATE_DATA_SIZE],
  ['ATOMIC_REQUEST', ATOMIC_REQUEST_HEADER_SIZE],
  ['ATOMIC_RESPONSE', ATOMIC_RESPONSE_HEADER_SIZE],
];

const bitLength = (n: number): number => Math.max(1, Math.ceil(Math.log2(n + 1)));
export { errBits } from './records';
const orAll = (xs: readonly Expr[]): Expr => xs.reduce((a, b) => a.or(b));

/** Header checks on the DDP control octet (D+0) and the RDMAP control octet (D+1). */
function ctrlChecks(c0: Expr, c1: Expr, rfc7306: Expr, OP: ReturnType<typeof rnicNames>['OP']) {
  const t = c0.bit(7);
  const dv = c0.slice(1, 0);
  const rv = c1.slice(7, 6);
  const op = c1.slice(3, 0);
  const badDv = dv.ne(DDP_VERSION);
  const badRv = rv.ne(RDMAP_VERSION);
  const badOp = op.gt(OP.ATOMIC_RESPONSE).or(op.ge(OP.IMMEDIATE).and(rfc7306.not()));
  const taggedOp = op.eq(OP.WRITE).or(op.eq(OP.READ_RESPONSE));
  const badT = t.ne(taggedOp);
  const noData = orAll(FIXED.map(([o]) => op.eq(OP[o])));
  return { t, dv, op, badDv, badRv, badOp, badT, noData };
}

export function ddpRxHdrModule(bytes: number): Module {
  if (!Number.isInteger(bytes) || bytes < 4 || bytes > 64 || (bytes & (bytes - 1)) !== 0) throw new RangeError(`DDP RX header datapath width must be a power of two from 4 to 64, got ${bytes}`);
  if (DdpFlag.T !== 0x80 || RdmapCtrl.OPCODE !== 0x0f || TermCtrl.D !== 0x40) throw new Error('wire constants moved');
  const W = bytes;
  const CAP = DDP_RX_CAPTURE;
  const BMAX = Math.ceil(CAP / W);
  const BW = bitLength(BMAX);
  const oT = TAGGED_HEADER_SIZE % W;
  const kT = Math.floor(TAGGED_HEADER_SIZE / W);
  const oU = UNTAGGED_HEADER_SIZE % W;
  const kU = Math.floor(UNTAGGED_HEADER_SIZE / W);
  const name = `ddp_rx_hdr_w${W}`;
  const m = new ModuleBuilder(
    name,
    `DDP/RDMAP header decoder and header checks H1-H7 (RFC 5041 sections 4 and 7, RFC 5040 section 4,\n` +
      `RFC 7306; spec/ddp-rdmap.md section 5.1), ${W} octets per beat. One ULPDU per s_axis packet (as\n` +
      'mpa_rx outputs it). m_desc: one descriptor per ULPDU after its last beat (decoded DDP header, the first\n' +
      '52 octets after the untagged header, lengths, verdict ok or Terminate layer/etype/code). m_axis: the ULP\n' +
      'data after the DDP header of every ULPDU that passes and whose opcode carries data (Write, Read Response,\n' +
      'Sends), realigned to lane 0, one packet per ULPDU, none when empty.',
    { bytes: W, capture: CAP },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const cfg7306 = m.input('cfg_rfc7306', 1, { group: 'Configuration (sampled with each ULPDU\'s first beat)', doc: 'accept RFC 7306 opcodes 0x8-0xB (the setting of the QP whose ULPDU is on s_axis)' });
  const s = sinkStream({ bytes: W }).declare(m, 's_axis', 'AXI4-Stream input: one ULPDU per packet (s_axis)');
  const o = sourceStream({ bytes: W }).declare(m, 'm_axis', 'AXI4-Stream output: ULP data of passing data-carrying ULPDUs, from lane 0 (m_axis)');
  const dGroup = 'Descriptor output: one per ULPDU, after its last input beat (m_desc)';
  const dData = m.output('m_desc_tdata', DDP_RX_DESC.width, { group: dGroup, record: DDP_RX_DESC });
  const dValidO = m.output('m_desc_tvalid', 1, { group: dGroup });
  const dReady = m.input('m_desc_tready', 1, { group: dGroup });

  const K = rnicNames(m);
  const eMarker = K.err(LlpError.MARKER);
  const eTagVer = K.err(DdpError.TAGGED_VERSION);
  const eUntVer = K.err(DdpError.UNTAGGED_VERSION);
  const eTooLong = K.err(DdpError.TOO_LONG);
  const eRv = K.err(RdmapError.INVALID_VERSION);
  const eOp = K.err(RdmapError.UNEXPECTED_OPCODE);

  // --- registers ---------------------------------------------------------------------------------
  const bcnt = m.reg('beat', BW, { reset: 0, doc: `beat index in the ULPDU, saturating at ${BMAX}` });
  const LG = Math.log2(W);
  const pos = m.reg('pos', 16 - LG, { reset: 0, doc: `octets of the ULPDU before this beat, over ${W}` });
  const tReg = m.reg('tagged', 1, { doc: 'T bit of this ULPDU' });
  const passReg = m.reg('pass', 1, { doc: 'this ULPDU passes H2-H5 and may carry data: its data goes to m_axis' });
  const buf = m.reg('capture', 8 * CAP, { doc: `first ${CAP} octets of the ULPDU as of the last beat taken, zero past its end` });
  const descLen = m.reg('desc_len', 16, { doc: 'octets of the ULPDU whose checks run on capture' });
  const pend = m.reg('desc_pend', 1, { reset: 0, doc: 'a ULPDU has ended: its checks run on capture until its descriptor moves to desc' });
  const res = m.reg('res_data', 8 * W, { doc: 'octets of the previous beat waiting for the next output beat' });
  const resKeep = m.reg('res_keep', W, { reset: 0 });
  const flush = m.reg('flush', 1, { reset: 0, doc: 'the residual of a ended ULPDU is the next output beat' });
  const pValid = m.reg('out_valid', 1, { reset: 0 });
  const pData = m.reg('out_data', 8 * W);
  const pKeep = m.reg('out_keep', W);
  const pLast = m.reg('out_last', 1);
  const dValid = m.reg('desc_valid', 1, { reset: 0 });
  const desc = m.reg('desc', DDP_RX_DESC.width, { record: DDP_RX_DESC });
  m.assign(o.valid, pValid);
  m.assign(o.data, pData);
  m.assign(o.keep!, pKeep);
  m.assign(o.last!, pLast);
  m.assign(dValidO, dValid);
  m.assign(dData, desc);

  // --- input beat ----------------------------------------------------------------------------------
  const keep = s.keep!;
  const last = s.last!;
  const lane = (e: Expr, i: number) => e.slice(8 * i + 7, 8 * i);
  const curM = m.let('in_masked', cat(...Array.from({ length: W }, (_, i) => mux(keep.bit(i), lane(s.data, i), lit(8, 0))).reverse()), {
    doc: 'input lanes, zero where tkeep is 0',
  });
  const outFree = pValid.not().or(o.ready);
  const descFree = dValid.not().or(dReady);
  const isFirst = m.let('first_beat', bcnt.eq(0));
  // The residual flush of a ULPDU shares its cycle with the next ULPDU's first beat (a flush is
  // pending only before a first beat, and it goes out whenever an input beat can be accepted). That
  // beat sends nothing itself unless it is a whole one-beat ULPDU with data (W >= 16 only): then its
  // beat takes the place of the flushed residual in res and is flushed in turn. Back-to-back
  // ULPDUs lose no cycle at any width.
  const inOk = flush.not().or(isFirst);
  // A beat may overwrite capture (and a last beat desc_len) only once the ended ULPDU's
  // descriptor leaves the check stage.
  const checked = pend.not().or(descFree);
  m.assign(s.ready, inOk.and(outFree).and(checked));
  const fire = m.let('fire', s.valid.and(inOk).and(outFree).and(checked), { doc: 'an input beat is accepted' });
  // tkeep is 2^k − 1 (the contract above): k from its top lane, not a popcount.
  const count = thermometerCount(m, 'in_octets', keep, 'octets in this beat');
  // pos counts whole beats and a beat holds 0..W octets: the count's low bits are the length's,
  // its top bit (a full beat) adds one to pos. No adder behind the count.
  const lenNow = m.let('in_len', cat(mux(count.bit(LG), pos.add(1), pos), count.slice(LG - 1, 0)), {
    doc: 'octets of the ULPDU up to and including this beat',
  });

  // Beat-0 decision: the data of a passing, data-carrying ULPDU goes out as it arrives (H1 only
  // shortens it to nothing, and H6/H7 do not apply to opcodes that carry data).
  const c0 = ctrlChecks(lane(s.data, 0), lane(s.data, 1), cfg7306, K.OP);
  const pass0 = c0.badDv.or(c0.badRv).or(c0.badOp).or(c0.badT).or(c0.noData).not();
  const T = m.let('t_now', mux(isFirst, c0.t, tReg), { doc: 'T bit of the ULPDU in flight' });
  const pass = m.let('pass_now', mux(isFirst, pass0, passReg));

  // --- realignment: the data starts at octet 14 (tagged) or 18 (untagged) -------------------------
  const shDown = (e: Expr, unit: number, off: number) => (off === 0 ? e : cat(lit(unit * off, 0), e.slice(unit * W - 1, unit * off)));
  /** Lanes [0, W − off) from res, [W − off, W) from the current beat's lanes [0, off). */
  const join = (r: Expr, c: Expr, unit: number, off: number) => (off === 0 ? r : cat(c.slice(unit * off - 1, 0), r.slice(unit * (W - off) - 1, 0)));
  const sel = (t: Expr, f: (off: number) => Expr) => (oT === oU ? f(oT) : mux(t, f(oT), f(oU)));
  const shData = m.let('sh_data', sel(T, (off) => shDown(s.data, 8, off)), { doc: 'this beat moved down past the header offset' });
  const shKeep = m.let('sh_keep', sel(T, (off) => shDown(keep, 1, off)));
  // A later data beat is never a first beat: its T is tagged_reg, its pass pass_reg (registered
  // selects, so the wide output mux does not wait for the first beat's header decode).
  const jData = m.let('join_data', sel(tReg, (off) => join(res, s.data, 8, off)), { doc: 'the residual and the head of this beat' });
  const jKeep = m.let('join_keep', sel(tReg, (off) => join(resKeep, keep, 1, off)));
  const beyond = m.let('in_beyond', sel(tReg, (off) => keep.bit(off)), { doc: 'this later beat has octets past the header offset' });
  const kOf = (t: Expr) => (kT === kU ? lit(BW, kT) : mux(t, lit(BW, kT), lit(BW, kU)));
  // The first data octet is in beat 0 when the header is shorter than a beat (T and pass from
  // this beat's header), else in beat k (T and pass registered), as two terms side by side.
  const atFirst = kU === 0 ? [isFirst.and(pass0)] : kT === 0 ? [isFirst.and(pass0).and(c0.t)] : [];
  const atLater = kU === 0 ? [] : [isFirst.not().and(passReg).and(bcnt.eq(kOf(tReg)))];
  const atK = m.let('at_k', orAll([...atFirst, ...atLater]), { doc: 'this beat holds the first data octet' });
  const pastK = m.let('past_k', passReg.and(bcnt.gt(kOf(tReg))), { doc: 'a later data beat' });

  // --- the first 70 octets ------------------------------------------------------------------------
  const view: Expr[] = [];
  for (let i = 0; i < CAP; i++) {
    const b = Math.floor(i / W);
    const here = bcnt.eq(b);
    const cur = lane(curM, i % W);
    const old = lane(buf, i);
    view.push(mux(here, cur, b === 0 ? old : mux(bcnt.lt(b), lit(8, 0), old)));
  }
  // capture takes the view: after a ULPDU's last beat it holds exactly what the checks read.
  const v = m.let('hdr_view', cat(...view.reverse()), { doc: 'the first octets of the ULPDU as of this beat (zero past its end)' });

  // --- checks H1-H7 the cycle after the last beat, on capture and desc_len -----------------------
  const V = (i: number) => lane(buf, i);
  const len = m.let('ulpdu_len', descLen, { doc: 'octets of the ULPDU' });

  // In checkHeader's order.
  // The setting of the ULPDU being checked, taken with its first beat: a shared block's next
  // ULPDU (another QP's) may be arriving by now.
  const cfg7306Reg = m.reg('rfc7306', 1, { doc: 'cfg_rfc7306 as of the first beat of the ULPDU in capture' });
  m.sync(() => m.when(fire.and(isFirst), () => m.set(cfg7306Reg, cfg7306)));
  const c = ctrlChecks(V(0), V(1), cfg7306Reg, K.OP);
  const hsize = mux(c.t, lit(16, TAGGED_HEADER_SIZE), lit(16, UNTAGGED_HEADER_SIZE));
  const plen = m.let('rdmap_len', len.sub(UNTAGGED_HEADER_SIZE), { doc: 'octets after the untagged header' });
  const fixed = m.let(
    'fixed_len',
    FIXED.reduce<Expr>((acc, [op, size]) => mux(c.op.eq(K.OP[op]), lit(16, size), acc), lit(16, 0)),
    { doc: 'RDMAP part the untagged opcode needs (0: data allowed)' },
  );
  const term = c.op.eq(K.OP.TERMINATE);
  const termCtrl = V(UNTAGGED_HEADER_SIZE + 2);
  const tD = termCtrl.bit(6);
  const tR = termCtrl.bit(5);
  // The copied header's T bit. checkHeader also asks that it be there (rdmap_len > 6): capture is
  // zero past the ULPDU's end, so a missing octet reads T = 0 and no length compare is needed.
  const tc = tD.and(V(UNTAGGED_HEADER_SIZE + TERMINATE_HEADER_SIZE + TERM_SEGMENT_LENGTH_SIZE).bit(7));
  const termLen = m.let(
    'term_len',
    lit(16, TERMINATE_HEADER_SIZE)
      .add(mux(tD, mux(tc, lit(16, TERM_SEGMENT_LENGTH_SIZE + TAGGED_HEADER_SIZE), lit(16, TERM_SEGMENT_LENGTH_SIZE + UNTAGGED_HEADER_SIZE)), lit(16, 0)))
      .add(mux(tR, lit(16, READ_REQUEST_HEADER_SIZE), lit(16, 0))),
    { doc: "a Terminate's length from its D/R bits and copied header type" },
  );
  const untagged = c.t.not();
  // H7's allowed length is term_len for a Terminate, fixed_len for the other opcodes without data:
  // two compares side by side rather than one behind a mux of the two.
  const checks: (readonly [Expr, Expr])[] = [
    [len.lt(hsize), eMarker],
    [c.badDv, mux(c.t, eTagVer, eUntVer)],
    [c.badRv, eRv],
    [c.badOp, eOp],
    [c.badT, eOp],
    [untagged.and(plen.lt(fixed)), eMarker],
    [untagged.and(term).and(plen.lt(termLen)), eMarker],
    [untagged.and(term).and(plen.gt(termLen)), eTooLong],
    [untagged.and(term.not()).and(c.noData).and(plen.gt(fixed)), eTooLong],
  ];
  // Every check's error code is nonzero: the first failing check as an AND-OR, ok as none failing.
  const err = m.let('verdict', priorityMux(checks), { doc: '{code, etype, layer}, 0 = passed' });
  const ok = anyOf(checks.map(([cond]) => cond)).not();
  // H6/H7 apply to opcodes without data only, and a length past the header passes H1: for an
  // opcode with data, ok is H2-H5 passing (header octets only, no length compare behind them).
  const hdrOk = c.badDv.or(c.badRv).or(c.badOp).or(c.badT).not();
  const hasPayload = m.let('has_payload', hdrOk.and(c.noData.not()).and(len.gt(hsize)));
  /** A header field (ts-model/wire/layouts.ts) as a big-endian number. */
  const be = (f: WireField) => cat(...Array.from({ length: f.size }, (_, j) => V(f.offset + j)));
  const descNext = DDP_RX_DESC.pack({
    ok,
    has_payload: hasPayload,
    err,
    ulpdu_len: len,
    payload_len: mux(hasPayload, len.sub(hsize), lit(16, 0)),
    t: c.t,
    l: V(DDP_TAGGED.ctrl.offset).bit(6),
    dv: c.dv,
    opcode: c.op,
    rsvd_ulp: be(DDP_TAGGED.rsvd_ulp),
    stag: be(DDP_TAGGED.stag),
    to: be(DDP_TAGGED.to),
    qn: be(DDP_UNTAGGED.qn),
    msn: be(DDP_UNTAGGED.msn),
    mo: be(DDP_UNTAGGED.mo),
    rdmap: buf.slice(8 * CAP - 1, 8 * UNTAGGED_HEADER_SIZE),
    ctrl0: be(DDP_TAGGED.ctrl),
  });

  // The ULPDU's data ends in the beat that holds its first octet: one output beat. At W >= 16 that
  // is a first beat, which may meet a pending residual flush: then it waits in res, flushed next.
  const oneBeat = atK.and(last).and(sel(T, (off) => keep.bit(off)));
  const wait = Math.min(kT, kU) === 0;
  const sendOne = wait ? oneBeat.and(flush.not()) : oneBeat;
  // The output register loads the flush, a later data beat or a one-beat packet (at most one of
  // them: a flush is pending only before a first beat); the value's selects are registered.
  const flushNow = flush.and(outFree);
  const loadOut = flushNow.or(fire.and(pastK.or(sendOne)));

  m.sync(() => {
    m.when(o.ready, () => m.set(pValid, 0));
    m.when(dReady, () => m.set(dValid, 0));
    m.when(pend.and(descFree), () => {
      m.set(dValid, 1);
      m.set(desc, descNext);
      m.set(pend, 0);
    });
    m.when(loadOut, () => {
      m.set(pValid, 1);
      m.set(pData, mux(flush, res, mux(pastK, jData, shData)));
      m.set(pKeep, mux(flush, resKeep, mux(pastK, jKeep, shKeep)));
      m.set(pLast, flush.or(pastK.not()).or(last.and(beyond.not())));
    });
    m.when(flushNow, () => m.set(flush, 0));
    m.when(fire, () => {
      m.set(buf, v);
      m.set(bcnt, mux(last, lit(BW, 0), mux(bcnt.eq(BMAX), bcnt, bcnt.add(1))));
      m.set(pos, mux(last, lit(16 - LG, 0), pos.add(1)));
      m.set(tReg, T);
      m.set(passReg, pass);
      m.when(atK.or(pastK), () => {
        m.set(res, shData);
        m.set(resKeep, shKeep);
      });
      if (wait) m.when(oneBeat.and(flush), () => m.set(flush, 1));
      m.when(pastK, () => m.set(flush, last.and(beyond)));
      m.when(last, () => {
        m.set(pend, 1);
        m.set(descLen, lenNow);
      });
    });
  });
  return m.build();
}

/** Widths the block is generated for. */
export const DDP_RX_HDR_WIDTHS = [4, 8, 16, 32, 64] as const;
