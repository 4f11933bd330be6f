import { CRC32C } from '../../ts-model/crc32c';
import { CRC_SIZE, MARKER_PERIOD, MpaErrorCode, ULPDU_LENGTH_SIZE } from '../../ts-model/mpa/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { contextMemory } from '../lib/context';
import { crcPipeline, crcStateWidth } from '../lib/crc';
import { stateMachine } from '../lib/fsm';
import { thermometerCount } from '../lib/keep';
import { oneHotMux } from '../lib/onehot';
import { indexBits } from '../lib/ram';
import { record } from '../lib/record';
import { pipelineRegister } from '../lib/stage';
import { ringWindow, ringWrite, unitsOf } from './mpa-rx-shift';

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
  });

/**
 * A marker the reader retires, on its way to the verdict beside the CRC (its own delay line: the
 * FPDUPTR compare takes the line's first stage, off the reader's cycle and off the verdict's).
 */
const RX_MARKER = record('mpa_rx_marker', {
  check: { width: 1, doc: 'the beat retires a marker: its FPDUPTR is checked' },
  lead: { width: 1, doc: "that marker is the FPDU's leading marker (FPDUPTR must be 0)" },
  fpduptr: { width: 16, doc: 'its FPDUPTR' },
  dist: { width: 15, doc: 'words from ULPDU_Length to it' },
});

/**
 * The same marker as the reader retires it, before its FPDUPTR is picked: the FPDUPTR field of
 * every window word and the one-hot place of the marker among them (K words).
 */
const RX_MARKER_RAW = (K: number) =>
  record('mpa_rx_marker_raw', {
    check: { width: 1, doc: 'the beat retires a marker: its FPDUPTR is checked' },
    lead: { width: 1, doc: "that marker is the FPDU's leading marker (FPDUPTR must be 0)" },
    at: { width: K, doc: 'one-hot: the window word that is the marker' },
    fpduptrs: { width: 16 * K, doc: 'the FPDUPTR field of each window word' },
    dist: { width: 15, doc: 'words from ULPDU_Length to it' },
  });

/** A TCP payload beat in the input register. */
const RX_IN = (W: number, kb: number) =>
  record('mpa_rx_in', {
    data: 8 * W,
    keep: W,
    octets: { width: kb, doc: 'octets in the beat (tkeep is 2^k - 1)' },
  });

/** Shared by QPs, an input beat with its segment's QP and end. */
const RX_IN_QP = (W: number, kb: number, qb: number) =>
  record('mpa_rx_in_qp', {
    qp: { width: qb, doc: 'tid: the QP of the segment' },
    last: { width: 1, doc: 'the TCP segment ends here' },
    beat: RX_IN(W, kb),
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
const RX_CTX = (K: number, SW: number, crcWidth: number) =>
  record('mpa_rx_ctx', {
    markers: { width: 1, doc: 'markers in this direction' },
    crc_on: { width: 1, doc: 'CRC-32C negotiated' },
    max_ulpdu: { width: 16, doc: 'maxUlpduLength' },
    stopped: { width: 1, doc: 'an error stopped the stream' },
    at_start: { width: 1, doc: 'the reader is at the first beat of an FPDU' },
    hdr_ok: { width: 1, doc: 'at_start: ul holds the ULPDU_Length, decoded' },
    ul: { width: 16, doc: 'ULPDU octets left at the read pointer' },
    last: { width: 1, doc: 'ul <= W' },
    over_max: { width: 1, doc: 'ul over max_ulpdu' },
    hdr_off: 15,
    marker_pos: PHASE_BITS,
    marker_fault: { width: 1, doc: 'a marker of the open FPDU had a wrong FPDUPTR' },
    crc: { width: crcWidth, doc: "the CRC component's state in the open FPDU (lib/crc.ts, 'check')" },
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
 * 1. Gearbox (write side): an s_axis beat of k = 1..W octets goes through an input register (a
 *    skid buffer: tready is a register; its octet count is taken on the way in), then is rotated
 *    by the write pointer mod W and stored where the pointer says (each ring octet takes one
 *    lane of the rotated beat: ringWrite in mpa-rx-shift.ts), so TCP segments of any size pack
 *    into a contiguous octet stream whose word boundaries are 4-aligned relative to S0. The input
 *    register is emptied by the ring's fill level (registered), so one beat per cycle is taken
 *    while the reader keeps up.
 * 2. Reader: each cycle it looks at the K = N + 3 words at the read pointer and, when the words it
 *    needs are there and the output register is free, produces one m_axis beat of the current FPDU
 *    and retires r words (r ≤ K): the ULPDU is the FPDU 2 octets in, so output beat j carries
 *    marker-free octets 2 + jW .. 1 + (j+1)W; the last beat of an FPDU also retires its PAD and CRC
 *    words. One FPDU per beat at most (one m_axis packet per FPDU).
 *    - Markers are found by position: the word at the read pointer has marker phase
 *      (cfg_seq − cfg_s0)/4 + retired words (mod 128), kept as the distance to the next marker
 *      (marker_pos, a register, so no decision waits on an adder, with marker_near: it is in the
 *      window); a marker word in the window is squeezed out before the octets are picked (at
 *      most one: K < 128). A marker before an FPDU's first octet is its leading marker (FPDUPTR
 *      must be 0); any other marker's FPDUPTR must equal its distance from the ULPDU_Length octet
 *      (spec/mpa.md §4.4). The compare rides with the beat beside the CRC and a fault is reported
 *      after the CRC, as the model does.
 *    - The reader decides from registers: the beat at the read pointer is decoded when its
 *      length is known, a cycle ahead (ul_now, last_beat, mf_words, over_max), and the words it
 *      needs are compared without a sum. On an FPDU's last beat the next FPDU's ULPDU_Length
 *      is picked from the window, mf_words on (one more past a marker), and decoded, so the next
 *      FPDU starts decoded and every FPDU, a one-beat one too, takes its beats and no more; if
 *      its word is not in yet (or is word K), it is taken at the read pointer in a cycle of its
 *      own. Every window word is decoded (length, <= W, over the maximum, mf_words) beside the
 *      select, whose one-hot compares registers with constants; the pick is the registers' data,
 *      the reader's decision their enable.
 *    - The FPDUPTR compare has its own delay line beside the CRC pipeline: stage 0 takes the
 *      window's FPDUPTR fields and the marker's one-hot place, stage 1 picks the FPDUPTR, stage 2
 *      compares, stage 3 meets the beat's CRC register.
 *    - Depth (abc9, xilinx, 64 octets): the ring read alone is about 5 LUT levels, so the
 *      decode of the next ULPDU_Length (window, pick, register) is the longest path.
 *    - CRC: every retired word (markers, a leading marker included, and the CRC field) goes
 *      through the CRC component (hdl-gen/lib/crc.ts, its 'check' form: the words stay where the
 *      window has them, no shifter), restarted at each FPDU; the FPDU passes if the raw register
 *      ends at the residue 0xB798B438 (spec/mpa.md §3.1) or cfg_crc = 0. The
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
 * leave the output (drain_busy, drain_qp). The switch waits on a registered idle (reader_idle_seen:
 * last cycle no input went in and the reader had no beat or its beat emptied the ring), so the
 * context loads do not hang off the reader's decision. Cost: 2 cycles per switch at 8 and 64
 * octets when the segment before ends with its last FPDU (measured in
 * test/cosim/mpa-rx-shared.test.ts), a cycle more when it leaves octets over; segments of the
 * same QP back to back cost none. tuser
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
  const idleOut = m.output('idle', 1, { group: stGroup, doc: `nothing left to do without more input: no beat the reader can make, none in the input register or in flight${shared ? ' (for QP ctx_qp; the others have none)' : ''}` });
  if (!shared) m.allowUnused(s.last!, 'a TCP segment end carries no MPA meaning: FPDUs are delineated by ULPDU_Length');

  const errCrc = m.constant('ERR_CRC', 8, MpaErrorCode.CRC_MISMATCH, 'LLP error: CRC mismatch');
  const errMarker = m.constant('ERR_MARKER', 8, MpaErrorCode.MARKER_MISMATCH, 'LLP error: FPDUPTR mismatch or ULPDU_Length over the maximum');

  // --- registers ---------------------------------------------------------------------------------
  const ring = m.reg('ring', 8 * RING_OCTETS, { doc: `${C} words of received octets, ring order` });
  const wp = m.reg('wr_ptr', OW, { reset: 0, doc: 'octet where the next input octet goes' });
  const rp = m.reg('rd_ptr', PW, { reset: 0, doc: 'word the reader is at' });
  const fill = m.reg('fill', SW, { reset: 0, doc: 'octets in the ring' });
  const mpos = m.reg('marker_pos', PHASE_BITS, { doc: 'words from the read pointer to the next marker word, mod 128' });
  // Set with marker_pos wherever it is set, so the reader's marker decisions start from a register.
  const mposNear = m.reg('marker_near', 1, { doc: 'marker_pos < K: that marker word is in the window' });
  // One stream: marker_pos follows the static configuration until the first beat. Shared: it comes with the context.
  const started = shared ? null : m.reg('started', 1, { reset: 0, doc: 'the reader has made a beat (marker_pos counts from then on)' });
  const first = m.reg('at_start', 1, { reset: 1, doc: 'the reader is at the first beat of an FPDU' });
  // The beat at the read pointer, decoded when its length was known (a cycle ahead), so the
  // reader's decision starts from registers.
  const ul = m.reg('ul_now', 16, { doc: "ULPDU octets left at the read pointer, this beat's included (at_start: the ULPDU_Length, if hdr_ok)" });
  const last = m.reg('last_beat', 1, { doc: 'ul_now <= W: this beat ends the FPDU' });
  const overMax = m.reg('over_max', 1, { doc: 'at_start: ul_now is over the maximum (spec/mpa.md §6 step 2)' });
  const hdrOff = m.reg('hdr_off', 15, { doc: 'words from the ULPDU_Length word to the read pointer' });
  const hdrOk = m.reg('hdr_ok', 1, { reset: 0, doc: 'at_start: ul_now holds the FPDU\'s ULPDU_Length, decoded' });
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
  // The CRC of the retired words, K at most a beat: only checked, so the component's 'check' form.
  const crcForm = { params: CRC32C, bytes: WORD * K, unit: WORD, form: 'check' } as const;
  const crcWidth = crcStateWidth(crcForm);
  const ctxLayout = RX_CTX(K, SW, crcWidth);
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
        next: m.reg('ctx_next_qp', qb, { doc: 'the QP of the segment waiting in the input register' }),
        ahead: m.reg('ctx_ahead', 1, { reset: 0, doc: "ctx_next_qp's context was read at the switch request and is current" }),
        inSeg: m.reg('in_segment', 1, { reset: 0, doc: 'the input register is inside a segment: its QP cannot change' }),
        resume: m.reg('crc_resume', 1, { reset: 0, doc: "the open FPDU's CRC continues from crc_saved at the reader's next beat" }),
        crcSaved: m.reg('crc_saved', crcWidth, { doc: "the CRC state of ctx_qp's open FPDU, from its context" }),
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
        backCrc: m.reg('back_crc', crcWidth, { doc: 'the CRC state after the last beat to leave the pipeline' }),
        mem: contextMemory(m, 'rx_ctx', { width: ctxLayout.width, depth: Math.max(2, qps!), latency: 1, doc: "each QP's mpa_rx_ctx between its segments" }),
      };
    })();
  /** `e`, and (shared) the registers hold a QP's stream. */
  const live = (e: Expr): Expr => (sw ? e.and(sw.valid) : e);
  if (sw) m.assign(m.output('ctx_qp', qb, { group: stGroup, doc: 'the QP whose stream is in the block (idle: it has nothing more to do)' }), sw.qp);
  // The reader and the CRC pipeline move together (advance: the output skid buffer's registered ready).
  const advance = m.wire('advance', 1, { doc: 'the reader, the CRC pipeline and the delay beside it move this cycle' });

  // --- gearbox: input beats into the ring ----------------------------------------------------------
  // The input register (a skid buffer: s_axis_tready is a register) cuts the beat's rotation into
  // the ring off the upstream's logic; its octet count is taken on the way in.
  const kb = bitLength(W);
  const inBeat = RX_IN(W, kb).pack({ data: s.data, keep: s.keep!, octets: thermometerCount(m, 'in_octets', s.keep!, 'octets in the input beat') });
  const inReg = pipelineRegister(m, 'in', { valid: s.valid, data: shared ? RX_IN_QP(W, kb, qb).pack({ qp: s.id!, last: s.last!, beat: inBeat }) : inBeat }, {
    skid: true,
    doc: 'a TCP payload beat',
  });
  m.assign(s.ready, inReg.ready);
  const iq = shared ? RX_IN_QP(W, kb, qb).view(inReg.out.data, { m, prefix: 'in_qp' }) : null;
  const ib = RX_IN(W, kb).view(iq ? iq.beat : inReg.out.data, { m, prefix: 'in_beat' });
  const inValid = inReg.out.valid;
  const inQp = iq ? iq.qp : null;
  const inLast = iq ? iq.last : null;
  const keep = ib.keep;
  const kOctets = ib.octets;
  const room = m.let('ring_room', fill.le(RING_OCTETS - W), { doc: 'a whole beat fits whatever the reader does' });
  const switchReq = sw
    ? m.let('ctx_switch', sw.fsm.is('RUN').and(inValid).and(sw.valid.not().or(sw.inSeg.not().and(inQp!.ne(sw.qp)))), { doc: 'a segment of another QP is in the input register' })
    : lit(1, 0);
  const takeIn = sw ? m.let('in_open', sw.fsm.is('RUN').and(switchReq.not()), { doc: "the input register holds ctx_qp's stream" }) : null;
  const inOpen = (e: Expr): Expr => (takeIn ? takeIn.and(e) : e);
  m.assign(inReg.out.ready, inOpen(stopped.or(room)));
  const accept = m.let('accept', inOpen(inValid.and(room)).and(stopped.not()));
  const { data: placed, mask: placedKeep } = ringWrite(m, 'wr', ib.data, keep, 8, wp, RING_OCTETS);
  const writeMask = m.let('wr_mask', cat(...unitsOf(placedKeep, 1).map((b) => b.repeat(8)).reverse()), { doc: 'the ring octets the input beat writes' });

  // --- reader: the window at the read pointer -----------------------------------------------------
  const seqOff = m.let('seq_off', cfgSeq.sub(cfgS0), { doc: 'cfg_seq - S0 (mod 512)' });
  m.allowUnused(seqOff, 'bits [1:0] are 0: cfg_seq is 4-aligned relative to S0 (spec/mpa.md §4.5)');
  // A register, not (S0 - seq)/4 - retired words: the squeeze and the marker checks hang off it.
  const firstMpos = m.let('first_marker_pos', lit(PHASE_BITS, 0).sub(seqOff.slice(8, 2)), { doc: 'words from the first octet received to the first marker' });
  const mk = m.let('marker_in', cfgMarkers.and(mposNear), { doc: 'a marker word is in the window' });
  // With a marker in the window, marker_pos and mf_words (at most N + 2 < K) fit the bits of a
  // window word's index: the compares that go with marker_in take those bits only.
  const IB = bitLength(K - 1);
  const mposAt = mpos.slice(IB - 1, 0);
  // K words for the beat and the CRC.
  const win = ringWindow(m, 'win', ring, 32, rp, K);
  const w = unitsOf(win, 32);
  // Marker-free words: the window with its marker word squeezed out (N + 1 for the output).
  const cw = Array.from({ length: N + 1 }, (_, i) => mux(mk.and(mposAt.le(i)), w[i + 1]!, w[i]!));
  const mf = m.let('mf_win', cat(cw[N]!.slice(8 * ULPDU_LENGTH_SIZE - 1, 0), ...cw.slice(0, N).reverse()), {
    doc: 'marker-free octets 0..W+1 from the read pointer',
  });
  m.allowUnused(mf, 'octets 0..1: the ULPDU_Length (or ULPDU octets of the beat before), decoded from the window');
  const lead = m.let('lead_marker', first.and(mk).and(mposAt.eq(0)), { doc: "the window starts with this FPDU's leading marker" });
  const ulSmall = ul.slice(LB, 0);
  const z = (e: Expr, width = SW) => e.zext(width);
  /**
   * Marker-free words from a beat to the end of its FPDU, `u` ULPDU octets left: ceil((u + 2) / 4)
   * + 1 (ULPDU_Length, ULPDU, PAD, CRC), as one sum: (u + 2 + 3 + 4) / 4, so a single carry chain
   * follows each window word's ULPDU_Length.
   */
  const mfToEnd = (u: Expr) => z(u).add(ULPDU_LENGTH_SIZE + WORD - 1 + CRC_SIZE).shr(2);
  /** Marker-free words a beat retires, `u` its ULPDU octets left and `isLast` whether u <= W. */
  const mfWords = (u: Expr, isLast: Expr) => mux(isLast, mfToEnd(u.slice(LB, 0)), lit(SW, N));
  const mfr = m.reg('mf_words', SW, { doc: 'marker-free words retired by this beat (decoded with ul_now)' });
  const mfrAt = mfr.slice(IB - 1, 0);
  const markerRet = m.let('marker_retired', mk.and(mposAt.lt(mfrAt)), { doc: 'the marker word is retired by this beat' });
  const r = m.let('words', mfr.add(z(markerRet)), { doc: 'words retired by this beat' });
  const avail = m.let('words_avail', z(fill.slice(SW - 1, 2)), { doc: 'whole words in the ring' });
  // The words the beat needs (r on a last beat, N + 1 and the marker otherwise), compared without
  // the sum: each arm is a compare of registers or of mf_words.
  const haveWords = m.let(
    'have_words',
    mux(last, mux(markerRet, avail.gt(mfr), avail.ge(mfr)), mux(mk.and(mposAt.le(N)), avail.ge(N + 2), avail.ge(N + 1))),
    { doc: 'the words this beat needs are in the ring' },
  );
  const oversize = m.let('oversize', first.and(overMax), { doc: 'ULPDU_Length over the maximum (spec/mpa.md §6 step 2)' });
  const ends = m.let('fpdu_end', oversize.or(last), { doc: 'the beat ends its FPDU (an oversize one at once)' });
  const canGo = mux(first, hdrOk.and(oversize.or(haveWords)), haveWords);
  const go = m.let('go', live(stopped.not()).and(advance).and(canGo), { doc: 'the reader produces a beat' });

  // ULPDU_Length is read from the window: on an FPDU's last beat the next FPDU's, mf_words on
  // (past the marker if one is retired or sits in its place; the window holds it unless that is
  // word K), so the next FPDU starts decoded, one-beat FPDUs too; else, at an FPDU start, the one
  // at the read pointer (after its leading marker), decoded in a cycle of its own.
  const toDecode = m.let('hdr_at_start', first.and(hdrOk.not()), { doc: 'the FPDU at the read pointer is still to decode' });
  const nextAdj = m.let('next_hdr_skip', mk.and(mposAt.le(mfrAt)), { doc: 'a marker comes before the next ULPDU_Length' });
  /** The window word of the ULPDU_Length at the read pointer: 0, or 1 after a leading marker. */
  const startSel = (i: number): Expr => (i === 0 ? lead.not() : i === 1 ? lead : lit(1, 0));
  /** The window word of the next FPDU's: mf_words on, one more past a marker. */
  // Spelled per word, so each select compares registers with constants: word i if mf_words is i
  // and no marker comes up to it, or mf_words is i - 1 and a marker comes before (next_hdr_skip).
  const markerUpTo = (i: number): Expr => (i >= (1 << IB) - 1 ? mk : mk.and(mposAt.le(i)));
  const nextSel = (i: number): Expr => {
    const here = mfrAt.eq(i).and(markerUpTo(i).not());
    return i === 0 ? here : here.or(mfrAt.eq(i - 1).and(markerUpTo(i - 1)));
  };
  const hdrSel = w.map((_, i) => mux(toDecode, startSel(i), nextSel(i)));
  // Every window word is decoded as if it held the ULPDU_Length, in parallel with the select, and
  // the select picks the decoded fields: the compares and the word count do not wait on the select.
  const lenAt = w.map((word) => field16(word, 0));
  // len <= W (a power of two) as gates: no bit above LB, and bit LB only with nothing below it.
  const lastAt = lenAt.map((len) => len.slice(15, LB + 1).eq(0).and(len.bit(LB).not().or(len.slice(LB - 1, 0).eq(0))));
  const pickDecoded = (name: string, values: readonly Expr[], doc: string) => m.let(name, oneHotMux(values.map((v, i) => [hdrSel[i]!, v] as const)), { doc });
  const decLen = pickDecoded('ulpdu_length', lenAt, 'the ULPDU_Length to decode, from the window (big-endian)');
  const decLast = pickDecoded('ulpdu_length_last', lastAt, 'that ULPDU_Length is at most W: its FPDU is one beat');
  const decOver = pickDecoded('ulpdu_length_over', lenAt.map((len) => len.gt(cfgMax)), 'that ULPDU_Length is over the maximum (spec/mpa.md §6 step 2)');
  const decMfr = pickDecoded('ulpdu_length_words', lenAt.map((len, i) => mfWords(len, lastAt[i]!)), 'mf_words of the first beat of that FPDU');
  const nextMfr = m.let('next_mf_words', mfWords(ul.sub(W), ul.le(2 * W)), { doc: 'mf_words of the beat after this one in the FPDU' });
  // Its word is in the ring (and in the window): words before it < avail.
  const nextIn = m.let('next_hdr_in', mux(nextAdj, mfr.lt(K - 1).and(avail.gt(mfr.add(1))), avail.gt(mfr)), { doc: "on a last beat: the next FPDU's ULPDU_Length is in the window" });
  const hdrLoad = m.let('hdr_load', toDecode.and(mux(lead, avail.gt(1), avail.gt(0))).and(live(stopped.not())), { doc: 'the ULPDU_Length at the read pointer is decoded' });

  // Marker check (spec/mpa.md §4.4), its inputs: the marker's FPDUPTR and its distance from ULPDU_Length.
  // The FPDUPTR fields of the window words and the marker's place among them go to the marker
  // check's first stage as they are: the pick (window read, then select) is made there.
  const ptrFields = m.let('window_fpduptrs', cat(...w.map((word) => field16(word, 2)).reverse()), { doc: 'the FPDUPTR field of every window word' });
  const markerAt = m.let('marker_at', cat(...w.map((_, i) => mpos.eq(i)).reverse()), { doc: 'one-hot: the window word that is the marker' });
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
    last: ends,
    oversize,
  });
  const crcPipe = crcPipeline(m, 'crc', { ...crcForm, inputRegister: true, advance }, {
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
  const crcBad = m.let('crc_bad', crcOn.and(crcPipe.matches!.not()), { doc: 'the CRC check fails if this beat ends the FPDU' });
  // The marker check, in stream order: a leading marker's FPDUPTR is 0, any other's is the distance
  // from ULPDU_Length (spec/mpa.md §4.4); a wrong one fails the FPDU after its CRC, as the model.
  // Its delay line moves with the CRC pipeline's stages (advance): stage 0 takes the reader's
  // marker with the window's FPDUPTR fields, stage 1 its FPDUPTR picked, stage 2 the compare,
  // stage 3 meets the beat's CRC register.
  const rawLayout = RX_MARKER_RAW(K);
  const mraw = m.reg('mchk_s0', rawLayout.width, { doc: 'the marker of the beat in the CRC input register, its FPDUPTR still to pick' });
  const mr = rawLayout.view(mraw, { m, prefix: 'mchk_raw' });
  const rawPtrs = unitsOf(mr.fpduptrs, 16);
  const fpduptr = m.let('fpduptr', oneHotMux(rawPtrs.map((f, i) => [mr.at.bit(i), f] as const)), { doc: 'FPDUPTR of the marker word in the window' });
  const picked = RX_MARKER.pack({ check: mr.check, lead: mr.lead, fpduptr, dist: mr.dist });
  const mchk = m.reg('mchk_s1', RX_MARKER.width, { doc: 'stage 1: the marker with its FPDUPTR' });
  const mc = RX_MARKER.view(mchk, { m, prefix: 'mchk' });
  const ptrOk = mux(mc.lead, mc.fpduptr.eq(0), z(mc.fpduptr, 17).eq(cat(mc.dist, lit(2, 0))));
  const ptrWrong = mc.check.and(ptrOk.not());
  const mwrong = [2, 3].map((i) => m.reg(`mchk_wrong_s${i}`, 1, { doc: `stage ${i}: the beat retired a marker with a wrong FPDUPTR` }));
  m.sync(() =>
    m.when(advance, () => {
      m.set(mraw, rawLayout.pack({ check: markerRet, lead, at: markerAt, fpduptrs: ptrFields, dist }));
      m.set(mchk, picked);
      m.set(mwrong[0]!, ptrWrong);
      m.set(mwrong[1]!, mwrong[0]!);
    }),
  );
  const mfault = m.reg('marker_fault', 1, { reset: 0, doc: 'a marker of the FPDU at the verdict had a wrong FPDUPTR' });
  const mfaultNow = vq ? mux(vq.resumed, vq.mfault_in, mfault) : mfault;
  const markerBad = m.let('marker_bad', mfaultNow.or(mwrong[1]!), { doc: 'a marker of this FPDU so far was wrong' });
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
  // A beat in the input register is input received: the block is not idle while it waits there.
  const idle = m.let('block_idle', frontIdle.and(inOpen(inValid).not()).and(out.out.valid.not()).and(crcPipe.busy.not()).and(sw ? sw.wb.busy.not() : lit(1, 1)), {
    doc: 'no beat the reader can make, none in the input register or in flight',
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
      ul,
      last,
      over_max: overMax,
      hdr_off: hdrOff,
      marker_pos: mpos,
      marker_fault: lit(1, 0),
      crc: lit(crcWidth, 0),
      fill,
      words: win.slice(32 * K - 1, 0),
    });
    const fresh = ctxLayout.update(ctxLayout.zero(), { markers: cfgMarkersIn, crc_on: cfgCrcIn, max_ulpdu: cfgMaxIn, at_start: 1, marker_pos: firstMpos });
    // The switch: the reader has made every beat it can and the last switch's QP has left the block.
    // The reader has no beat to make if, last cycle, no input went in and it had none or its beat
    // retired every octet in the ring (its state changes only by its beats and by input, and a
    // waiting segment stops the input). The switch takes this register, not reader_idle, so the
    // loads of the context into the ring and the reader's registers do not wait on the reader's
    // decision. A switch after a segment that ends with its last FPDU (nothing left over) costs
    // what it did; one that leaves octets over costs a cycle more.
    const drainsAll = m.let('reader_drains', fill.slice(1, 0).eq(0).and(mux(markerRet, avail.eq(mfr.add(1)), avail.eq(mfr))), {
      doc: 'the beat at the read pointer retires every octet in the ring',
    });
    const idleSeen = m.reg('reader_idle_seen', 1, { reset: 0, doc: 'last cycle: no input taken, and reader_idle or a beat that emptied the ring' });
    m.sync(() => m.set(idleSeen, frontIdle.or(go.and(drainsAll)).and(accept.not())));
    const capture = m.let('ctx_capture', sw.fsm.is('DRAIN').and(idleSeen).and(wb.busy.not()), { doc: "ctx_qp's reader state is taken, the next QP's context read" });
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
    const aheadRead = m.let('ctx_ahead_read', switchReq.and(wb.pending.and(wb.qp.eq(inQp!)).not()).and(cfgLoad.valid.and(cfgLoad.qp.eq(inQp!)).not()), {
      doc: "the waiting segment's QP's context is read ahead",
    });
    const aheadOk = m.let('ctx_ahead_ok', sw.ahead.and(cfgHit.not()), { doc: 'the context read ahead is current: the switch loads it at once' });
    const lookupQp = mux(sw.fsm.is('RUN'), inQp!, sw.next);
    sw.mem.lookup(lookupQp, aheadRead.or(capture.and(aheadOk.not())).or(sw.fsm.is('FETCH').and(cfgHit)));
    m.assign(m.output('drain_busy', 1, { group: stGroup, doc: 'beats of drain_qp, the QP switched away from, may still be in the block' }), wb.busy);
    m.assign(m.output('drain_qp', qb, { group: stGroup }), wb.qp);
    const view = ctxLayout.view(sw.mem.value, { m, prefix: 'ctx_in' });
    // The fields are wires of the module: read them here, outside the process.
    const v = Object.fromEntries(ctxLayout.fields.map((f) => [f.name, view[f.name as keyof typeof view]])) as typeof view;
    const loadMfr = m.let('ctx_in_mf_words', mfWords(v.ul, v.last), { doc: "mf_words of the loaded context's beat" });
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
      m.set(ul, v.ul);
      m.set(last, v.last);
      m.set(mfr, loadMfr);
      m.set(overMax, v.over_max);
      m.set(hdrOff, v.hdr_off);
      m.set(mpos, v.marker_pos);
      m.set(mposNear, v.marker_pos.lt(K));
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
      m.when(inValid.and(inReg.out.ready), () => m.set(sw.inSeg, inLast!.not()));
      m.when(go, () => m.set(sw.resume, 0));
      m.when(advance.and(crcPipe.valid), () => m.set(sw.backCrc, crcPipe.state!));
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
            m.set(sw.next, inQp!);
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
    if (started)
      m.when(started.not().and(go.not()), () => {
        m.set(mpos, firstMpos);
        m.set(mposNear, firstMpos.lt(K));
      });
    // The beat at the read pointer's registers take the window's ULPDU_Length, decoded, when one is
    // decoded there or a beat ends its FPDU (toDecode and ends are registers: the pick is on the
    // data path, the reader's decision drives the enable only); a beat inside an FPDU takes the
    // next beat's values.
    const takeDecoded = toDecode.or(ends);
    m.when(hdrLoad.or(go), () => {
      m.set(ul, mux(takeDecoded, decLen, ul.sub(W)));
      m.set(last, mux(takeDecoded, decLast, ul.le(2 * W)));
      m.set(mfr, mux(takeDecoded, decMfr, nextMfr));
      // Read only at an FPDU's first beat: a beat inside it may leave anything there.
      m.set(overMax, decOver);
      // The next FPDU starts decoded if its ULPDU_Length is in; an oversize FPDU's end is not
      // known (nothing after it is output): its successor is looked for at the read pointer.
      m.set(hdrOk, toDecode.or(last.and(oversize.not()).and(nextIn)));
    });
    m.when(go, () => {
      m.set(first, ends);
      // The words retired are mf_words and the marker, if retired: both sums are made from
      // registers beside the marker's compare, which picks one.
      const offBase = mux(first, lit(15, 0).sub(z(lead, 15)), hdrOff).add(z(mfr, 15));
      m.set(hdrOff, mux(markerRet, offBase.add(1), offBase));
      const mposBase = mpos.sub(mfr.slice(PHASE_BITS - 1, 0));
      m.set(mpos, mux(markerRet, mposBase.sub(1), mposBase));
      m.set(mposNear, mux(markerRet, mposBase.sub(1).lt(K), mposBase.lt(K)));
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
