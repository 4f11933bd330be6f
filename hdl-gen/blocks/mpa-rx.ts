import { CRC32C } from '../../ts-model/crc32c';
import { CRC_SIZE, MARKER_PERIOD, MpaErrorCode, ULPDU_LENGTH_SIZE } from '../../ts-model/mpa/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { contextMemory } from '../lib/context';
import { crcPipeline } from '../lib/crc';
import { stateMachine } from '../lib/fsm';
import { thermometerCount } from '../lib/keep';
import { oneHotMux } from '../lib/onehot';
import { indexBits } from '../lib/ram';
import { record } from '../lib/record';
import { pipelineRegister } from '../lib/stage';
import { ringPlace, ringWindow, unitsOf } from './mpa-rx-shift';

/** 32-bit words: FPDU starts, markers and CRC fields are 4-aligned relative to S0 (spec/mpa.md §4.5). */
const WORD = 4;
/** Bits of the marker phase counted in words: 512 / 4 = 128 words per marker period. */
const PHASE_BITS = Math.log2(MARKER_PERIOD / WORD);

const log2 = (n: number): number => Math.log2(n);
const bitLength = (n: number): number => Math.max(1, Math.ceil(Math.log2(n + 1)));
const nextPow2 = (n: number): number => 1 << Math.ceil(Math.log2(n));
/** The big-endian 16-bit field at octet `at` of `x` (ULPDU_Length at 0, a marker's FPDUPTR at 2). */
const field16 = (x: Expr, at: number): Expr => cat(x.slice(8 * at + 7, 8 * at), x.slice(8 * at + 15, 8 * at + 8));

/** A reader beat as it rides beside the CRC until its verdict. */
const RX_BEAT = (W: number) =>
  record('mpa_rx_beat', {
    data: { width: 8 * W, doc: 'ULPDU octets' },
    keep: W,
    last: { width: 1, doc: 'the FPDU (or an oversize one) ends here' },
    oversize: { width: 1, doc: 'ULPDU_Length over the maximum: this FPDU fails with 0x03' },
    // The marker check waits beside the CRC too: its compare is off the reader's cycle.
    marker_check: { width: 1, doc: 'this beat retires a marker: its FPDUPTR is checked' },
    marker_lead: { width: 1, doc: "that marker is the FPDU's leading marker (FPDUPTR must be 0)" },
    fpduptr: { width: 16, doc: 'its FPDUPTR' },
    marker_dist: { width: 15, doc: 'words from ULPDU_Length to it' },
  });

/**
 * Shared by QPs, a reader beat names its QP and carries what the verdict needs of that QP's
 * context, so the reader can take the next QP while the last one's beats are still in the CRC
 * pipeline.
 */
const RX_QP_BEAT = (W: number, qb: number) =>
  record('mpa_rx_qp_beat', {
    qp: { width: qb, doc: 'the QP of the beat' },
    crc_on: { width: 1, doc: 'its QP has the CRC' },
    resumed: { width: 1, doc: "the first beat after its QP's context was loaded" },
    mfault_in: { width: 1, doc: 'with resumed: the marker fault of its open FPDU, from the context' },
    beat: RX_BEAT(W),
  });

/** m_axis_tuser of the shared block: the verdict and, on a failed FPDU, its LLP error code. */
export const MPA_RX_VERDICT = record('mpa_rx_verdict', {
  passed: { width: 1, doc: 'on tlast: the FPDU passed every check' },
  llp_err: { width: 8, doc: 'on a tlast with passed 0: the LLP error code (Terminate 0x2/0x0/code)' },
});

/**
 * A QP's receive context in the shared block: its configuration, the reader's registers and the
 * octets it could not yet use (fewer than a beat needs), from the read pointer on.
 */
const RX_CTX = (K: number, SW: number) =>
  record('mpa_rx_ctx', {
    markers: { width: 1, doc: 'markers in this direction' },
    crc_on: { width: 1, doc: 'CRC-32C negotiated' },
    max_ulpdu: { width: 16, doc: 'maxUlpduLength' },
    stopped: { width: 1, doc: 'an error stopped the stream' },
    at_start: { width: 1, doc: 'the reader is at the first beat of an FPDU' },
    hdr_ok: { width: 1, doc: 'hdr_len holds the next ULPDU_Length' },
    hdr_len: 16,
    ul_left: 16,
    hdr_off: 15,
    marker_pos: PHASE_BITS,
    marker_fault: { width: 1, doc: 'a marker of the open FPDU had a wrong FPDUPTR' },
    crc: { width: 32, doc: 'the raw CRC register of the open FPDU' },
    fill: { width: SW, doc: 'octets left over' },
    words: { width: 32 * K, doc: 'those octets, from the read pointer' },
  });

export interface MpaRxOptions {
  /**
   * QPs sharing the block (`mpa_rx_w<W>_q<N>`): their streams arrive on s_axis by tid, whole TCP
   * segments, each QP's state in a context memory. Absent: one stream (`mpa_rx_w<W>`), no tid.
   */
  readonly qps?: number;
}

/** The most QPs one mpa_rx serves (issue 10: up to 16384 per RNIC). */
export const MPA_RX_MAX_QPS = 16384;

/** `mpa_rx_w<W>` for one stream, `mpa_rx_w<W>_q<N>` shared by N QPs. */
export const mpaRxName = (bytes: number, qps?: number): string => `mpa_rx_w${bytes}${qps === undefined ? '' : `_q${qps}`}`;

/**
 * The MPA receive side of one stream (RFC 5044 deframing; spec/mpa.md §2–§4, checks of §6) for a
 * datapath of `bytes` = W octets (a power of two ≥ 4), matching ts-model/mpa/deframer.ts.
 *
 * Two stages around an octet ring of C words (C = the power of two ≥ 2N + 4, N = W/4):
 *
 * 1. Gearbox (write side): each accepted s_axis beat of k = 1..W octets is rotated to the write
 *    pointer and stored, so TCP segments of any size pack into a contiguous octet stream whose
 *    word boundaries are 4-aligned relative to S0. tready depends only on the ring's fill level
 *    (registered), so one beat per cycle is taken while the reader keeps up.
 * 2. Reader: each cycle it looks at the K = N + 3 words at the read pointer and, when the words it
 *    needs are there and the output register is free, produces one m_axis beat of the current FPDU
 *    and retires r words (r ≤ K): the ULPDU is the FPDU 2 octets in, so output beat j carries
 *    marker-free octets 2 + jW .. 1 + (j+1)W; the last beat of an FPDU also retires its PAD and CRC
 *    words. One FPDU per beat at most (one m_axis packet per FPDU).
 *    - Markers are found by position: the word at the read pointer has marker phase
 *      (cfg_seq − cfg_s0)/4 + retired words (mod 128), kept as the distance to the next marker
 *      (marker_pos, a register, so no decision waits on an adder); a marker word in the window
 *      is squeezed out before the octets are picked (at most one: K < 128). A marker before an
 *      FPDU's first octet is its leading marker (FPDUPTR must be 0); any other marker's FPDUPTR
 *      must equal its distance from the ULPDU_Length octet (spec/mpa.md §4.4). The compare rides
 *      with the beat beside the CRC and a fault is reported after the CRC, as the model does.
 *    - ULPDU_Length is read a step ahead (hdr_len): after an FPDU's last beat from the words
 *      behind it, or, when they have not arrived, in a cycle of its own before the next beat.
 *    - CRC: every retired word (markers, a leading marker included, and the CRC field) goes
 *      through the CRC component (hdl-gen/lib/crc.ts), restarted at each FPDU; the FPDU passes if
 *      the raw register ends at the residue 0xB798B438 (spec/mpa.md §3.1) or cfg_crc = 0. The
 *      beat waits beside the CRC (its latency, four cycles: its input register cuts the reader's
 *      window and word count off the CRC's first stage) and the verdict and the first error
 *      are decided there, in stream order; the output is a skid buffer.
 *    - ULPDU_Length > cfg_max_ulpdu is found on the FPDU's first beat: that FPDU is output as one
 *      zero-length beat (tkeep 0, tlast, tuser 0) and the error is 0x03 (spec/mpa.md §6 step 2).
 *
 * The first failed FPDU ends with tuser = 0, sets err_valid/err_code (sticky until reset) and stops
 * the stream: nothing more is output and every later input octet is accepted and dropped.
 *
 * Shared by QPs (opts.qps): s_axis_tid names the QP of a TCP segment (an s_axis packet, whole) and
 * m_axis_tid that of a ULPDU beat. The registers above hold the stream of one QP, `ctx_qp`; each
 * QP's state between its segments (the mpa_rx_ctx record: configuration, the reader's registers,
 * the CRC of its open FPDU and the octets left over, fewer than a beat needs) lives in a context
 * memory (hdl-gen/lib/context.ts). A segment of another QP switches context, a stall of the
 * input: the new QP's context is read as soon as its segment is seen (ctx_ahead), the reader makes
 * every beat it can from the segments before, and then its registers are taken and the new
 * context loaded in one cycle (the octets into the ring from word 0; the CRC continues from the
 * saved register through the CRC component's load input; a context that cannot be read ahead,
 * its QP's own write-back or new connection in flight, is read then and loaded a cycle later). The
 * last QP's beats meanwhile finish in the CRC pipeline beside the new QP's: each beat names its QP
 * and carries its QP's CRC setting and, the first after a load, the marker fault of its open FPDU
 * (record mpa_rx_qp_beat), so its verdict is its own QP's; a failure stops that QP's stream. Once
 * its last beat has left the pipeline, the last QP's context is written back with the verdicts'
 * state (CRC register, marker fault, stopped); the next switch waits for that and for its beats to
 * leave the output (drain_busy, drain_qp). Cost: 2 cycles per switch at 8 and 64 octets (measured
 * in test/cosim/mpa-rx-shared.test.ts); segments of the same QP back to back cost none. tuser
 * carries a failed FPDU's code (record mpa_rx_verdict); a QP has beats in the block while `idle`
 * is low and it is ctx_qp, or while drain_busy and it is drain_qp.
 * cfg_valid loads QP cfg_qp's initial context (a new connection) into the memory; the QP must have
 * no segment in progress then (its pending write-back, if any, is dropped).
 */
export function mpaRxModule(bytes: number, opts: MpaRxOptions = {}): Module {
  if (!Number.isInteger(bytes) || bytes < WORD || (bytes & (bytes - 1)) !== 0) throw new RangeError(`MPA RX datapath width must be a power of two ≥ ${WORD}, got ${bytes}`);
  const { qps } = opts;
  if (qps !== undefined && (!Number.isInteger(qps) || qps < 1 || qps > MPA_RX_MAX_QPS)) throw new RangeError(`mpa_rx is shared by 1 to ${MPA_RX_MAX_QPS} QPs, got ${qps}`);
  const shared = qps !== undefined;
  const qb = shared ? indexBits(qps) : 0;
  const W = bytes;
  const N = W / WORD;
  /** Window words: the most one beat retires (N + 2 marker-free words and a marker). */
  const K = N + 3;
  const C = nextPow2(2 * N + 4);
  const RING_OCTETS = WORD * C;
  const PW = log2(C);
  const OW = log2(RING_OCTETS);
  /** Width of the small counts (fill level, words retired, words needed). */
  const SW = Math.max(8, OW + 1);
  const LB = log2(W);
  const m = new ModuleBuilder(
    mpaRxName(W, qps),
    `MPA receive side of one stream (RFC 5044 deframing; spec/mpa.md sections 2-4 and 6), ${W} octets per beat.\n` +
      'Takes the in-order TCP payload (any tkeep 2^k - 1 on any beat; tlast ignored), strips markers by\n' +
      'sequence position, delineates FPDUs by ULPDU_Length and outputs one m_axis packet per FPDU holding its\n' +
      'ULPDU (cut-through; a zero-length ULPDU is one beat with tkeep 0). tuser on tlast: 1 = the FPDU passed\n' +
      'every check. Checks in the order of section 6: ULPDU_Length <= cfg_max_ulpdu (0x03, on the first beat,\n' +
      'that FPDU is then one zero-length beat), CRC-32C (0x02, if cfg_crc), every FPDUPTR (0x03, if cfg_markers).\n' +
      (shared
        ? "The first error stops that QP's stream: its later input is accepted and dropped.\n"
        : 'The first error stops the stream: err_valid/err_code hold it, later input is accepted and dropped.\n') +
      `Internals: an octet ring of ${C} words (input gearbox) and a reader that retires up to ${K} words per beat.` +
      (shared
        ? `\nShared by ${qps} QPs: s_axis_tid names a segment's QP, m_axis_tid a beat's; each QP's state is kept in a context\n` +
          'memory between its segments (a stall of 2 cycles when the QP changes); tuser carries the\n' +
          'LLP error code of a failed FPDU (record mpa_rx_verdict); cfg_valid loads a QP\'s context (a new connection).'
        : ''),
    { bytes: W, ringWords: C, windowWords: K, leadMarkerInCrc: true, fpduptrRef: 'ulpduLength', checkMarkers: true, ...(shared && { qps }) },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const cfgGroup = shared ? "Connection setup: cfg_valid loads QP cfg_qp's context from the cfg_* fields (a new connection)" : 'Configuration (static while running)';
  const cfgLoad = shared
    ? { valid: m.input('cfg_valid', 1, { group: cfgGroup }), qp: m.input('cfg_qp', qb, { group: cfgGroup, doc: 'the QP whose stream starts over' }) }
    : null;
  const cfgMarkersIn = m.input('cfg_markers', 1, { group: cfgGroup, doc: 'markers in this direction (spec/mpa.md §4.2)' });
  const cfgCrcIn = m.input('cfg_crc', 1, { group: cfgGroup, doc: 'CRC-32C negotiated (spec/mpa.md §3.4)' });
  const cfgS0 = m.input('cfg_s0', 9, { group: cfgGroup, doc: 'S0[8:0] (spec/mpa.md §4.3)' });
  const cfgSeq = m.input('cfg_seq', 9, { group: cfgGroup, doc: 'sequence number [8:0] of the first octet received; (seq - S0) mod 4 = 0' });
  const cfgMaxIn = m.input('cfg_max_ulpdu', 16, { group: cfgGroup, doc: 'maxUlpduLength (spec/mpa.md §6 step 2)' });
  const s = sinkStream({ bytes: W, id: qb }).declare(m, 's_axis', `AXI4-Stream input: in-order TCP payload${shared ? ', whole segments, tid = QP' : ''} (s_axis)`);
  const o = sourceStream({ bytes: W, user: shared ? MPA_RX_VERDICT.width : 1, id: qb }).declare(
    m,
    'm_axis',
    `AXI4-Stream output: one ULPDU per FPDU, tuser = ${shared ? 'verdict, tid = QP' : 'passed'} (m_axis)`,
    shared ? MPA_RX_VERDICT : undefined,
  );
  const stGroup = 'Status';
  const errOut = shared
    ? null
    : {
        valid: m.output('err_valid', 1, { group: stGroup, doc: 'an MPA error stopped the stream (sticky until reset)' }),
        code: m.output('err_code', 8, { group: stGroup, doc: 'its LLP error code (Terminate 0x2/0x0/code)' }),
      };
  const fpduCount = m.output('fpdu_count', 32, { group: stGroup, doc: `FPDUs delivered with tuser${shared ? '.passed' : ''} = 1` });
  const idleOut = m.output('idle', 1, { group: stGroup, doc: `nothing left to do without more input: no beat the reader can make, none in flight${shared ? ' (for QP ctx_qp; the others have none)' : ''}` });
  m.allowUnused(s.last!, 'a TCP segment end carries no MPA meaning: FPDUs are delineated by ULPDU_Length');

  const crcResidue = m.constant('CRC_RESIDUE', 32, CRC32C.residue >>> 0, 'raw register after an FPDU and its CRC field (spec/mpa.md §3.1)');
  const errCrc = m.constant('ERR_CRC', 8, MpaErrorCode.CRC_MISMATCH, 'LLP error: CRC mismatch');
  const errMarker = m.constant('ERR_MARKER', 8, MpaErrorCode.MARKER_MISMATCH, 'LLP error: FPDUPTR mismatch or ULPDU_Length over the maximum');

  // --- registers ---------------------------------------------------------------------------------
  const ring = m.reg('ring', 8 * RING_OCTETS, { doc: `${C} words of received octets, ring order` });
  const wp = m.reg('wr_ptr', OW, { reset: 0, doc: 'octet where the next input octet goes' });
  const rp = m.reg('rd_ptr', PW, { reset: 0, doc: 'word the reader is at' });
  const fill = m.reg('fill', SW, { reset: 0, doc: 'octets in the ring' });
  const mpos = m.reg('marker_pos', PHASE_BITS, { doc: 'words from the read pointer to the next marker word, mod 128' });
  // One stream: marker_pos follows the static configuration until the first beat. Shared: it comes with the context.
  const started = shared ? null : m.reg('started', 1, { reset: 0, doc: 'the reader has made a beat (marker_pos counts from then on)' });
  const first = m.reg('at_start', 1, { reset: 1, doc: 'the reader is at the first beat of an FPDU' });
  const ulLeft = m.reg('ul_left', 16, { doc: 'ULPDU octets of this FPDU not yet output' });
  const hdrOff = m.reg('hdr_off', 15, { doc: 'words from the ULPDU_Length word to the read pointer' });
  const hdrLen = m.reg('hdr_len', 16, { doc: 'ULPDU_Length of the FPDU at the read pointer, read ahead (if hdr_ok)' });
  const hdrOk = m.reg('hdr_ok', 1, { reset: 0, doc: 'hdr_len holds the next FPDU\'s ULPDU_Length' });
  const stopped = m.reg('stopped', 1, { reset: 0, doc: 'an error stopped the stream' });
  const errR = errOut && { valid: m.reg('err_seen', 1, { reset: 0 }), code: m.reg('err_llp', 8, { reset: 0 }) };
  if (errOut && errR) {
    m.assign(errOut.valid, errR.valid);
    m.assign(errOut.code, errR.code);
  }
  const count = m.reg('good_fpdus', 32, { reset: 0 });
  m.assign(fpduCount, count);
  // The stream's configuration: the static inputs for one stream; shared, registers loaded with
  // the QP's context.
  const cfgMarkers = shared ? m.reg('ctx_markers', 1, { doc: 'cfg_markers of QP ctx_qp' }) : cfgMarkersIn;
  const cfgCrc = shared ? m.reg('ctx_crc_on', 1, { doc: 'cfg_crc of QP ctx_qp' }) : cfgCrcIn;
  const cfgMax = shared ? m.reg('ctx_max_ulpdu', 16, { doc: 'cfg_max_ulpdu of QP ctx_qp' }) : cfgMaxIn;
  const ctxLayout = RX_CTX(K, SW);
  // Shared: the context switch between QPs' segments.
  const sw =
    cfgLoad &&
    (() => {
      const fsm = stateMachine(m, 'ctx_state', ['RUN', 'DRAIN', 'FETCH'], {
        reset: 'RUN',
        doc: 'the context switch',
        meaning: {
          RUN: "QP ctx_qp's segments go in",
          DRAIN: "a segment of another QP waits: the reader makes ctx_qp's last beats",
          FETCH: "the waiting segment's QP's context is read; it is loaded at the end of the cycle",
        },
      });
      return {
        fsm,
        cfg: cfgLoad,
        qp: m.reg('ctx_qp_reg', qb, { reset: 0, doc: 'the QP whose stream the registers hold' }),
        valid: m.reg('ctx_valid', 1, { reset: 0, doc: "the registers hold ctx_qp's stream" }),
        next: m.reg('ctx_next_qp', qb, { doc: 'the QP of the segment waiting at s_axis' }),
        ahead: m.reg('ctx_ahead', 1, { reset: 0, doc: "ctx_next_qp's context was read at the switch request and is current" }),
        inSeg: m.reg('in_segment', 1, { reset: 0, doc: 's_axis is inside a segment: its QP cannot change' }),
        resume: m.reg('crc_resume', 1, { reset: 0, doc: "the open FPDU's CRC continues from crc_saved at the reader's next beat" }),
        crcSaved: m.reg('crc_saved', 32, { doc: "the CRC register of ctx_qp's open FPDU, from its context" }),
        mfSaved: m.reg('mfault_saved', 1, { doc: "the marker fault of ctx_qp's open FPDU, from its context" }),
        // The last QP's context, taken from the reader when it switches, written back once its
        // beats have left the CRC pipeline (their verdicts finish it: CRC, marker fault, stopped).
        wb: {
          pending: m.reg('wb_pending', 1, { reset: 0, doc: "wb_ctx waits for the drain QP's beats to leave the CRC pipeline" }),
          qp: m.reg('drain_qp_reg', qb, { reset: 0, doc: 'the QP switched away from: its beats may still be in the block' }),
          busy: m.reg('drain_busy_reg', 1, { reset: 0, doc: 'beats of drain_qp may still be in the block' }),
          ctx: m.reg('wb_ctx', ctxLayout.width, { doc: "drain_qp's context as the reader left it" }),
          stopped: m.reg('wb_stopped', 1, { doc: 'a verdict after the switch stopped drain_qp\'s stream' }),
        },
        backCrc: m.reg('back_crc', 32, { doc: 'the CRC register after the last beat to leave the pipeline' }),
        mem: contextMemory(m, 'rx_ctx', { width: ctxLayout.width, depth: Math.max(2, qps!), latency: 1, doc: "each QP's mpa_rx_ctx between its segments" }),
      };
    })();
  /** `e`, and (shared) the registers hold a QP's stream. */
  const live = (e: Expr): Expr => (sw ? e.and(sw.valid) : e);
  if (sw) m.assign(m.output('ctx_qp', qb, { group: stGroup, doc: 'the QP whose stream is in the block (idle: it has nothing more to do)' }), sw.qp);
  // The reader and the CRC pipeline move together (advance: the output skid buffer's registered ready).
  const advance = m.wire('advance', 1, { doc: 'the reader, the CRC pipeline and the delay beside it move this cycle' });

  // --- gearbox: input beats into the ring ----------------------------------------------------------
  const keep = s.keep!;
  const kOctets = thermometerCount(m, 'in_octets', keep, 'octets in the input beat');
  const room = m.let('ring_room', fill.le(RING_OCTETS - W), { doc: 'a whole beat fits whatever the reader does' });
  const switchReq = sw
    ? m.let('ctx_switch', sw.fsm.is('RUN').and(s.valid).and(sw.valid.not().or(sw.inSeg.not().and(s.id!.ne(sw.qp)))), { doc: 'a segment of another QP is at s_axis' })
    : lit(1, 0);
  const takeIn = sw ? m.let('in_open', sw.fsm.is('RUN').and(switchReq.not()), { doc: "s_axis carries ctx_qp's stream" }) : null;
  const inOpen = (e: Expr): Expr => (takeIn ? takeIn.and(e) : e);
  m.assign(s.ready, inOpen(stopped.or(room)));
  const accept = m.let('accept', inOpen(s.valid.and(room)).and(stopped.not()));
  const placed = ringPlace(m, 'wr_data', s.data, 8, wp);
  const placedKeep = ringPlace(m, 'wr_keep', keep, 1, wp);
  const writeMask = m.let('wr_mask', cat(...unitsOf(placedKeep, 1).map((b) => b.repeat(8)).reverse()));

  // --- reader: the window at the read pointer -----------------------------------------------------
  const seqOff = m.let('seq_off', cfgSeq.sub(cfgS0), { doc: 'cfg_seq - S0 (mod 512)' });
  m.allowUnused(seqOff, 'bits [1:0] are 0: cfg_seq is 4-aligned relative to S0 (spec/mpa.md §4.5)');
  // A register, not (S0 - seq)/4 - retired words: the squeeze and the marker checks hang off it.
  const firstMpos = m.let('first_marker_pos', lit(PHASE_BITS, 0).sub(seqOff.slice(8, 2)), { doc: 'words from the first octet received to the first marker' });
  const mk = m.let('marker_in', cfgMarkers.and(mpos.lt(K)), { doc: 'a marker word is in the window' });
  // K words for the beat and the CRC, one more for the next FPDU's ULPDU_Length after a last beat.
  const win = ringWindow(m, 'win', ring, 32, rp, K + 1);
  m.allowUnused(win, `word ${K}: only its first two octets are read (a ULPDU_Length behind the beat)`);
  const w = unitsOf(win, 32);
  // Marker-free words: the window with its marker word squeezed out (N + 1 for the output, up to
  // N + 2 for the next header).
  const cw = Array.from({ length: N + 3 }, (_, i) => mux(mk.and(mpos.le(i)), w[i + 1]!, w[i]!));
  const mf = m.let('mf_win', cat(cw[N]!.slice(8 * ULPDU_LENGTH_SIZE - 1, 0), ...cw.slice(0, N).reverse()), {
    doc: 'marker-free octets 0..W+1 from the read pointer',
  });
  const lenField = m.let('ulpdu_length', field16(mf, 0), { doc: 'ULPDU_Length (big-endian) if at_start' });
  const lead = m.let('lead_marker', first.and(mk).and(mpos.eq(0)), { doc: "the window starts with this FPDU's leading marker" });
  const ul = m.let('ul_now', mux(first, hdrLen, ulLeft), { doc: 'ULPDU octets left, this beat included (read ahead at a start)' });
  const last = m.let('last_beat', ul.le(W), { doc: 'this beat ends the FPDU' });
  const ulSmall = ul.slice(LB, 0);
  const z = (e: Expr, width = SW) => e.zext(width);
  // Marker-free words of the rest of the FPDU: ceil((ul + 2) / 4) + 1 (ULPDU_Length, ULPDU, PAD, CRC).
  const mfLast = z(ulSmall).add(ULPDU_LENGTH_SIZE + WORD - 1).shr(2).add(CRC_SIZE / WORD);
  const mfr = m.let('mf_words', mux(last, mfLast, lit(SW, N)), { doc: 'marker-free words retired by this beat' });
  const markerRet = m.let('marker_retired', mk.and(z(mpos).lt(mfr)), { doc: 'the marker word is retired by this beat' });
  const r = m.let('words', mfr.add(z(markerRet)), { doc: 'words retired by this beat' });
  const need = m.let('words_needed', mux(last, r, lit(SW, N + 1).add(z(mk.and(mpos.le(N))))), {
    doc: 'words that must be in the ring for this beat',
  });
  const avail = m.let('words_avail', z(fill.slice(SW - 1, 2)), { doc: 'whole words in the ring' });
  const oversize = m.let('oversize', first.and(hdrLen.gt(cfgMax)), { doc: 'ULPDU_Length over the maximum (spec/mpa.md §6 step 2)' });
  const headerIn = avail.ge(z(lead).add(1));
  // ULPDU_Length is read a step ahead, so no beat decision waits on ring data: after a last beat
  // from the words behind it (when they are in), otherwise in a cycle of its own at the start.
  const hdrLoad = m.let('hdr_load', first.and(hdrOk.not()).and(headerIn).and(live(stopped.not())), { doc: 'read the ULPDU_Length at the read pointer' });
  const haveWords = avail.ge(need);
  // The next FPDU starts mfr marker-free words on (after a marker the beat retires, or its own
  // leading marker): its ULPDU_Length is marker-free word mfr, window word mfr or mfr + 1.
  const nextHdrWord = m.let('next_hdr_word', mfr.add(z(mk.and(z(mpos).le(mfr)))), { doc: 'window word of the next FPDU\'s ULPDU_Length after a last beat' });
  const nextHdrIn = m.let('next_hdr_in', avail.gt(nextHdrWord), { doc: 'that word is in the ring' });
  const nextLen = m.let(
    'next_hdr_len',
    oneHotMux(cw.map((word, i) => [mfr.eq(i), field16(word, 0)] as const)),
    { doc: "the next FPDU's ULPDU_Length (big-endian) after a last beat" },
  );
  const canGo = mux(first, hdrOk.and(oversize.or(haveWords)), haveWords);
  const go = m.let('go', live(stopped.not()).and(advance).and(canGo), { doc: 'the reader produces a beat' });

  // Marker check (spec/mpa.md §4.4), its inputs: the marker's FPDUPTR and its distance from ULPDU_Length.
  const fpduptr = m.let(
    'fpduptr',
    oneHotMux(w.slice(0, K).map((word, i) => [mpos.eq(i), field16(word, 2)] as const)),
    { doc: 'FPDUPTR of the marker word in the window' },
  );
  const dist = m.let('marker_dist', mux(first, lit(15, 0), hdrOff).add(z(mpos, 15)), { doc: 'words from ULPDU_Length to the marker' });

  const keepLast = cat(...Array.from({ length: W }, (_, i) => ulSmall.gt(i)).reverse());
  const beatKeep = mux(oversize, lit(W, 0), mux(last, keepLast, lit(W, (1n << BigInt(W)) - 1n)));

  // CRC over the retired words (the library's CRC component, its first r words of the window). The
  // beat rides beside it as its tag, so the verdict is decided in stream order when the register
  // after the FPDU's last beat comes out, four cycles later (the input register: the reader's
  // decision and the CRC's shift by the word count would otherwise share one cycle).
  const DB = bitLength(K);
  const beat = RX_BEAT(W).pack({
    data: mf.slice(8 * (W + ULPDU_LENGTH_SIZE) - 1, 8 * ULPDU_LENGTH_SIZE),
    keep: beatKeep,
    last: oversize.or(last),
    oversize,
    marker_check: markerRet,
    marker_lead: lead,
    fpduptr,
    marker_dist: dist,
  });
  const crcPipe = crcPipeline(m, 'crc', { params: CRC32C, bytes: WORD * K, unit: WORD, inputRegister: true, advance }, {
    valid: go,
    data: win.slice(32 * K - 1, 0),
    count: r.slice(DB - 1, 0),
    start: first,
    ...(sw && { load: sw.resume, state: sw.crcSaved }),
    tag: sw ? RX_QP_BEAT(W, qb).pack({ qp: sw.qp, crc_on: cfgCrc, resumed: sw.resume, mfault_in: sw.mfSaved, beat }) : beat,
  });
  // Shared, the verdict's state is the beat's QP's: its CRC setting rides with it, and its first
  // beat after a load brings the marker fault of its open FPDU and clears the last QP's stop.
  const vq = sw ? RX_QP_BEAT(W, qb).view(crcPipe.tag!, { m, prefix: 'v_qp' }) : null;
  const d = RX_BEAT(W).view(vq ? vq.beat : crcPipe.tag!, { m, prefix: 'v_beat' });
  const crcOn = vq ? vq.crc_on : cfgCrc;
  const crcBad = m.let('crc_bad', crcOn.and(crcPipe.crc.ne(crcResidue)), { doc: 'the CRC check fails if this beat ends the FPDU' });
  // The marker check, in stream order: a leading marker's FPDUPTR is 0, any other's is the distance
  // from ULPDU_Length (spec/mpa.md §4.4); a wrong one fails the FPDU after its CRC, as the model.
  const ptrOk = mux(d.marker_lead, d.fpduptr.eq(0), z(d.fpduptr, 17).eq(cat(d.marker_dist, lit(2, 0))));
  const mfault = m.reg('marker_fault', 1, { reset: 0, doc: 'a marker of the FPDU at the verdict had a wrong FPDUPTR' });
  const mfaultNow = vq ? mux(vq.resumed, vq.mfault_in, mfault) : mfault;
  const markerBad = m.let('marker_bad', mfaultNow.or(d.marker_check.and(ptrOk.not())), { doc: 'a marker of this FPDU so far was wrong' });
  const verdictBad = crcBad.or(markerBad);
  const outStopped = m.reg('out_stopped', 1, { reset: 0, doc: 'an error was reported: nothing more is output' });
  const outStoppedNow = vq ? outStopped.and(vq.resumed.not()) : outStopped;
  const emit = m.let('v_emit', crcPipe.valid.and(outStoppedNow.not()), { doc: 'a beat leaves the delay for the output' });
  const fail = m.let('fail', emit.and(d.oversize.or(d.last.and(verdictBad))), { doc: 'this beat ends the stream with an error' });
  const code = mux(d.oversize.or(crcBad.not()), errMarker, errCrc);
  const outUser = d.oversize.not().and(d.last).and(verdictBad.not());
  const out = pipelineRegister(m, 'out', { valid: emit, data: cat(...(vq ? [vq.qp, code] : []), outUser, d.last, d.keep, d.data) }, { skid: true, doc: 'a ULPDU beat with its verdict' });
  m.assign(advance, out.ready);
  const frontIdle = m.let('reader_idle', live(canGo.and(stopped.not())).or(hdrLoad).not(), { doc: 'no beat the reader can make' });
  const idle = m.let('block_idle', frontIdle.and(out.out.valid.not()).and(crcPipe.busy.not()).and(sw ? sw.wb.busy.not() : lit(1, 1)), {
    doc: 'no beat the reader can make, none in flight',
  });
  m.assign(idleOut, idle);
  m.assign(o.data, out.out.data.slice(8 * W - 1, 0));
  m.assign(o.keep!, out.out.data.slice(9 * W - 1, 8 * W));
  m.assign(o.last!, out.out.data.bit(9 * W));
  m.assign(o.user!, out.out.data.slice(9 * W + o.user!.width, 9 * W + 1));
  /** The QP of the beat in the output register (shared). */
  const outQp = sw ? out.out.data.slice(out.out.data.width - 1, out.out.data.width - qb) : null;
  if (outQp) m.assign(o.id!, outQp);
  m.assign(o.valid, out.out.valid);
  m.assign(out.out.ready, o.ready);

  // --- shared: the context switch --------------------------------------------------------------------
  let switchProcess: (() => void) | null = null;
  if (sw) {
    const cfgLoad = sw.cfg;
    const { wb } = sw;
    // ctx_qp's reader state once it has made every beat it can: a beat needs more words than are
    // left (fewer than K), so the window holds every octet left over. Its CRC, marker fault and
    // stopped are the verdicts': they join it when its beats have left the CRC pipeline.
    const front = ctxLayout.pack({
      markers: cfgMarkers,
      crc_on: cfgCrc,
      max_ulpdu: cfgMax,
      stopped,
      at_start: first,
      hdr_ok: hdrOk,
      hdr_len: hdrLen,
      ul_left: ulLeft,
      hdr_off: hdrOff,
      marker_pos: mpos,
      marker_fault: lit(1, 0),
      crc: lit(32, 0),
      fill,
      words: win.slice(32 * K - 1, 0),
    });
    const fresh = ctxLayout.update(ctxLayout.zero(), { markers: cfgMarkersIn, crc_on: cfgCrcIn, max_ulpdu: cfgMaxIn, at_start: 1, marker_pos: firstMpos });
    // The switch: the reader has made every beat it can and the last switch's QP has left the block.
    const capture = m.let('ctx_capture', sw.fsm.is('DRAIN').and(frontIdle).and(wb.busy.not()), { doc: "ctx_qp's reader state is taken, the next QP's context read" });
    const cfgHit = m.let('ctx_cfg_hit', cfgLoad.valid.and(cfgLoad.qp.eq(sw.next)), { doc: 'the QP being read gets a new connection: read it again' });
    const loadNow = m.let('ctx_load', sw.fsm.is('FETCH').and(cfgHit.not()), { doc: "the next QP's context is loaded" });
    // The drain QP's beats have left the CRC pipeline once the pipeline is empty or its oldest beat is another QP's.
    const backDone = m.let('drain_done', wb.pending.and(crcPipe.busy.not().or(crcPipe.valid.and(vq!.qp.ne(wb.qp)))), {
      doc: "drain_qp's last verdict is in: its context is complete",
    });
    const wbWrite = m.let('wb_write', backDone.and(cfgLoad.valid.not()), { doc: "drain_qp's context is written back (a new connection's goes first)" });
    const wbData = ctxLayout.update(wb.ctx, { crc: sw.backCrc, marker_fault: mfault, stopped: wb.stopped });
    m.allowUnused(wb.ctx, "its CRC, marker fault and stopped are the verdicts' (back_crc, marker_fault, wb_stopped)");
    // The update port: a new connection's context, else the write-back (which then waits a cycle).
    sw.mem.update(cfgLoad.valid.or(wbWrite), mux(cfgLoad.valid, cfgLoad.qp, wb.qp), mux(cfgLoad.valid, fresh, wbData));
    // The next QP's context is read as soon as its segment is seen, while the reader finishes
    // (unless its own write-back or a new connection of it is in flight): the switch then loads it
    // at once. The read stays current until a new connection of that QP (the only write to it).
    const aheadRead = m.let('ctx_ahead_read', switchReq.and(wb.pending.and(wb.qp.eq(s.id!)).not()).and(cfgLoad.valid.and(cfgLoad.qp.eq(s.id!)).not()), {
      doc: "the waiting segment's QP's context is read ahead",
    });
    const aheadOk = m.let('ctx_ahead_ok', sw.ahead.and(cfgHit.not()), { doc: 'the context read ahead is current: the switch loads it at once' });
    const lookupQp = mux(sw.fsm.is('RUN'), s.id!, sw.next);
    sw.mem.lookup(lookupQp, aheadRead.or(capture.and(aheadOk.not())).or(sw.fsm.is('FETCH').and(cfgHit)));
    m.assign(m.output('drain_busy', 1, { group: stGroup, doc: 'beats of drain_qp, the QP switched away from, may still be in the block' }), wb.busy);
    m.assign(m.output('drain_qp', qb, { group: stGroup }), wb.qp);
    const view = ctxLayout.view(sw.mem.value, { m, prefix: 'ctx_in' });
    // The fields are wires of the module: read them here, outside the process.
    const v = Object.fromEntries(ctxLayout.fields.map((f) => [f.name, view[f.name as keyof typeof view]])) as typeof view;
    /** The next QP's context into the registers (at the end of this cycle). */
    const load = () => {
      m.set(sw.qp, sw.next);
      m.set(sw.valid, 1);
      m.set(cfgMarkers, v.markers);
      m.set(cfgCrc, v.crc_on);
      m.set(cfgMax, v.max_ulpdu);
      m.set(stopped, v.stopped);
      m.set(first, v.at_start);
      m.set(hdrOk, v.hdr_ok);
      m.set(hdrLen, v.hdr_len);
      m.set(ulLeft, v.ul_left);
      m.set(hdrOff, v.hdr_off);
      m.set(mpos, v.marker_pos);
      m.set(sw.mfSaved, v.marker_fault);
      m.set(sw.resume, 1);
      m.set(sw.crcSaved, v.crc);
      m.set(fill, v.fill);
      // The octets left over go to the ring from word 0.
      m.set(ring, v.words.zext(8 * RING_OCTETS));
      m.set(rp, 0);
      m.set(wp, v.fill.slice(OW - 1, 0));
    };
    // Run inside the block's one process (a register is driven from one place), last: its loads win.
    switchProcess = () => {
      m.when(s.valid.and(s.ready), () => m.set(sw.inSeg, s.last!.not()));
      m.when(go, () => m.set(sw.resume, 0));
      m.when(advance.and(crcPipe.valid), () => m.set(sw.backCrc, crcPipe.crc));
      // Once written back and out of the output register, the drain QP has left the block.
      m.when(wb.pending.not().and(out.out.valid.not().or(outQp!.ne(wb.qp))), () => m.set(wb.busy, 0));
      m.when(wbWrite, () => m.set(wb.pending, 0));
      // Its last verdict is in but the port is taken: the context is kept complete for the next cycle.
      m.when(backDone.and(wbWrite.not()), () => m.set(wb.ctx, wbData));
      // A new connection: on the QP in the registers, they no longer hold its stream; on the drain
      // QP, its old context is not written back over the new one.
      m.when(cfgLoad.valid.and(cfgLoad.qp.eq(sw.qp)), () => m.set(sw.valid, 0));
      m.when(cfgLoad.valid.and(cfgLoad.qp.eq(wb.qp)), () => m.set(wb.pending, 0));
      sw.fsm.cases({
        RUN: () =>
          m.when(switchReq, () => {
            m.set(sw.next, s.id!);
            m.set(sw.ahead, aheadRead);
            sw.fsm.goto('DRAIN');
          }),
        DRAIN: () => {
          m.when(cfgHit, () => m.set(sw.ahead, 0));
          m.when(capture, () => {
            // The context read ahead goes in now; otherwise it is read now and loaded next cycle.
            m.when(aheadOk, () => {
              sw.fsm.goto('RUN');
              load();
            }, () => sw.fsm.goto('FETCH'));
            m.set(wb.ctx, front);
            m.set(wb.qp, sw.qp);
            m.set(wb.pending, sw.valid);
            m.set(wb.busy, sw.valid);
            m.set(wb.stopped, stopped.or(advance.and(fail)));
            // No beat since its load: the pipeline is empty and its verdict state is the loaded one.
            m.when(sw.resume, () => {
              m.set(sw.backCrc, sw.crcSaved);
              m.set(mfault, sw.mfSaved);
            });
          });
        },
        FETCH: () =>
          m.when(loadNow, () => {
            sw.fsm.goto('RUN');
            load();
          }),
      });
    };
  }

  m.sync(() => {
    m.when(accept, () => {
      m.set(ring, ring.and(writeMask.not()).or(placed.and(writeMask)));
      m.set(wp, wp.add(z(kOctets, OW)));
    });
    m.set(fill, fill.add(mux(accept, z(kOctets), lit(SW, 0))).sub(mux(go, r.shl(2), lit(SW, 0))));
    // Until the first beat, marker_pos follows the configuration (static while running).
    if (started) m.when(started.not().and(go.not()), () => m.set(mpos, firstMpos));
    m.when(hdrLoad, () => {
      m.set(hdrLen, lenField);
      m.set(hdrOk, 1);
    });
    m.when(go, () => {
      m.set(first, last.or(oversize));
      m.set(hdrLen, nextLen);
      m.set(hdrOk, last.or(oversize).and(nextHdrIn));
      m.set(ulLeft, ul.sub(W));
      m.set(hdrOff, mux(first, lit(15, 0).sub(z(lead, 15)), hdrOff).add(z(r, 15)));
      m.set(mpos, mpos.sub(r.slice(PHASE_BITS - 1, 0)));
      if (started) m.set(started, 1);
      m.set(rp, rp.add(r.slice(PW - 1, 0)));
    });
    // The first failure stops the stream: the reader drops whatever else comes in.
    m.when(advance.and(crcPipe.valid), () => m.set(mfault, markerBad.and(d.last.not())));
    // Shared: the first beat after a load starts its QP's verdicts (a stream that had stopped makes no beats).
    if (vq) m.when(advance.and(crcPipe.valid).and(vq.resumed), () => m.set(outStopped, 0));
    m.when(advance.and(fail), () => {
      m.set(outStopped, 1);
      // Shared: a verdict of the drain QP stops its stream in the context it is written back with.
      if (sw && vq) m.when(sw.wb.pending.and(vq.qp.eq(sw.wb.qp)), () => m.set(sw.wb.stopped, 1), () => m.set(stopped, 1));
      else m.set(stopped, 1);
      if (errR) {
        m.set(errR.valid, 1);
        m.set(errR.code, code);
      }
    });
    m.when(out.out.valid.and(o.ready).and(out.out.data.bit(9 * W)).and(out.out.data.bit(9 * W + 1)), () => m.set(count, count.add(1)));
    switchProcess?.();
  });

  return m.build();
}

/** Widths the block is generated for. */
export const MPA_RX_WIDTHS = [4, 8, 16, 32, 64] as const;
