import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { keepFor, type BeatSource } from './ddp-tx-output';
import { fifo } from '../lib/fifo';
import { bramFifo } from '../lib/fifo-bram';
import { laneVector } from './rdmap-tx-resp-ulpdu';
import { laneShiftRight } from '../lib/lane-shift';
import { type Layout, type View, record } from '../lib/record';

/**
 * DDP segmentation of a message whose payload is in host memory (RFC 5041 §5.2; the model's
 * `segmentMessage`, ts-model/ddp/segmenter.ts), shared by rdmap_tx_resp_w<W> (Read Responses) and
 * ddp_tx_w<W> (RDMA Writes, Sends). A generator function: it adds its registers to the calling
 * module, which starts a message with `start()` and runs `sync()` in its register process.
 *
 * Fetch: W-octet aligned reads of the payload, issued while (reads issued − beats consumed) <
 * `depth`, the depth of the data FIFO, so `depth` reads may be in flight; data comes back in order,
 * at least a cycle after the handshake, and is always accepted. The fetcher is decoupled from the
 * segments: messages are pushed on `fetch` (as early as the caller knows them, ddp_tx at its work
 * request queue) and their reads go out back to back, the next message's while the current one is
 * still being sent, so a long memory latency costs once, not per message (Little's law: `depth`
 * beats in flight sustain one beat per cycle up to a latency of about `depth` cycles).
 * The data FIFO is a synchronous-read RAM (block RAM on an FPGA) with its read register as the
 * head: a beat is at the head two cycles after it arrives.
 * Segment: every segment is a DDP header of H octets (14 tagged, 18 untagged, RFC 5041 §4.2, §4.3)
 * and at most cfg_mulpdu − H payload octets; L on the last; a zero-length message is one empty
 * segment. The caller supplies the header octets from the segment's L, STag and TO: a tagged
 * header carries TO = starting TO + offset; an untagged one takes the MO from the low 32 bits
 * of the same counter started at 0.
 * Realign: payload octets go to lane H mod W by a rotate over {newest beat, held beat}; a beat that
 * straddles two segments is consumed once and held for the next.
 *
 * Rate: one beat per cycle while data keeps up; a segment costs exactly its ⌈(H + payload)/W⌉
 * beats, back to back across segments, plus one cycle per message when its first payload octets
 * straddle two memory beats. A message pushed on `fetch` while the fetcher is idle has its first
 * read out the next cycle.
 */
export interface SegmenterConfig {
  readonly W: number;
  /** Data FIFO depth in beats (a power of two); also the bound on reads in flight. */
  readonly depth: number;
  /**
   * The messages to read, in the order they will be started: `valid` pushes one (addr, size), read
   * once the messages before it are. At most `queue` of them wait; the caller guarantees no more.
   * With `queue` 0 there is no queue: the caller pushes only when the fetcher has read the last
   * message (rdmap_tx_resp takes a Read Response only when idle, after the previous one was sent).
   */
  readonly fetch: {
    readonly valid: Expr;
    readonly addr: Expr;
    readonly size: Expr;
    readonly queue: number;
  };
  /** Keep the TO as a carry select (16-bit add, the high 48 bits and their increment registered): no 64-bit chain, 48 more flip-flops. */
  readonly toCarrySelect?: boolean;
  /** Reads go out only while this is 1 (1 unless another reader shares the port, see sharedRead). */
  readonly fetchGate: Expr;
  /** Name prefix of the segment-state registers and wires (`rr` in rdmap_tx_resp). */
  readonly prefix: string;
  /** The block is sending a segmented message: reads and beats go out only then. */
  readonly active: Expr;
  /** The output register takes a beat this cycle. */
  readonly outFree: Expr;
  readonly cfgMulpdu: Expr;
  /**
   * The MULPDU that sizes the first segment in `start()`, when it is not `cfgMulpdu` (a block
   * shared by QPs: the starting request's, while cfgMulpdu is the message's register), with the
   * payload room of a full segment for each header size (tagged, then untagged when `untagged`
   * is not null), computed ahead so no subtraction sits behind the request's selection.
   */
  readonly startMulpdu?: { readonly mulpdu: Expr; readonly rooms: readonly Expr[] };
  /** 1 while the message is untagged (18-octet headers); null when every message is tagged. */
  readonly untagged: Expr | null;
  /**
   * The message `start()` takes: its payload's address mod W (lw bits) and its size (32 bits);
   * `first`: its first segment's first beat (segmentStartLayout, segmentStart()) when the caller
   * plans it ahead (ddp_tx, as the request enters its queue), else planned here at the start.
   */
  readonly request: { readonly phase: Expr; readonly size: Expr; readonly first?: View<SegmentStartField> };
  /** The memory read port (readPort()). */
  readonly rd: ReadPort;
  /** Another reader of the same port: it owns rd_addr and the returning data while `owns`. */
  readonly sharedRead: { readonly valid: Expr; readonly addr: Expr; readonly owns: Expr } | null;
  /** The header octets in wire order (14, or 18 when `untagged` is not null) for a segment. */
  readonly header: (last: Expr, stag: Expr, to: Expr) => Expr[];
}

/** The payload room of a full segment for each header size (tagged, then untagged) and the MULPDU. */
export interface SegmentMtu {
  readonly mulpdu: Expr;
  readonly rooms: readonly Expr[];
}

/** Bits of the slack avail − payload_octets: two's complement over [1 − W, 2W]. */
const slackBits = (W: number): number => Math.log2(W) + 3;

// x >= c and x <= c for a small constant c as bit tests on x's top bits and a compare of its low
// ones: LUTs, where a compare of all of x would be a carry chain (32 bits for a message size).
const lowBits = (c: number) => Math.max(1, Math.ceil(Math.log2(c + 1)));
const atLeast = (x: Expr, c: number): Expr => (x.width <= lowBits(c) ? x.ge(c) : x.slice(x.width - 1, lowBits(c)).ne(0).or(x.slice(lowBits(c) - 1, 0).ge(c)));
const atMost = (x: Expr, c: number): Expr => (x.width <= lowBits(c) ? x.le(c) : x.slice(x.width - 1, lowBits(c)).eq(0).and(x.slice(lowBits(c) - 1, 0).le(c)));

/**
 * The first beat of a segment of a message with `left` payload octets still to send (32 bits),
 * for each header size (the untagged one only when `untagged` is not null), picked by the
 * message's kind last. `hdr(h)`: the header size h as a 16-bit value.
 */
function firstSegmentBeat(W: number, untagged: Expr | null, left: Expr, mtu: SegmentMtu, hdr: (h: number) => Expr = (h) => lit(16, h)) {
  const lw = Math.log2(W);
  const kw = lw + 1;
  const variants = untagged ? [TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE] : [TAGGED_HEADER_SIZE];
  const byKind = (vs: readonly Expr[]): Expr => (vs.length === 1 ? vs[0]! : mux(untagged!, vs[1]!, vs[0]!));
  const each = variants.map((h, i) => {
    // left <= room (16 bits): its top half clear and a 16-bit compare, a short carry chain.
    const fits = left.slice(31, 16).eq(0).and(left.slice(15, 0).le(mtu.rooms[i]!));
    // Payload octets in beat 0: min(payload + h, W) − min(h, W); h >= W leaves none. As a
    // function of its candidates, so what is derived from it (the slack, k != 0) is computed
    // on each candidate in parallel and picked by the same selects.
    const kOf = (f: (k: Expr) => Expr): Expr => {
      const kFit = W > h ? mux(atLeast(left, W - h), f(lit(kw, W - h)), f(left.slice(lw, 0))) : f(lit(kw, 0));
      const kFull = W > h ? mux(atLeast(mtu.mulpdu, W), f(lit(kw, W - h)), f(mtu.rooms[i]!.slice(lw, 0))) : f(lit(kw, 0));
      return mux(fits, kFit, kFull);
    };
    return {
      fits,
      kOf,
      last: mux(fits, W > h ? atMost(left, W - h) : lit(1, 0), atMost(mtu.mulpdu, W)),
      segLeft: mux(fits, left.slice(15, 0).add(hdr(h)), mtu.mulpdu),
      msgLeft: mux(fits, lit(32, 0), left.sub(mtu.rooms[i]!.zext(32))),
    };
  });
  const pick = (f: 'fits' | 'last' | 'segLeft' | 'msgLeft') => byKind(each.map((e) => e[f]));
  const kOf = (f: (k: Expr) => Expr): Expr => byKind(each.map((e) => e.kOf(f)));
  return { fits: pick('fits'), k: kOf((k) => k), kOf, last: pick('last'), segLeft: pick('segLeft'), msgLeft: pick('msgLeft') };
}

type SegmentStartField = 'fits' | 'k' | 'k_some' | 'last' | 'seg_left' | 'msg_left' | 'slack';

/** A message's first segment's first beat, as segmentStart() plans it: what start() loads. */
export const segmentStartLayout = (W: number): Layout<SegmentStartField> =>
  record(`seg_start_w${W}`, {
    fits: { width: 1, doc: 'the message is one segment' },
    k: { width: Math.log2(W) + 1, doc: 'payload octets in its first beat' },
    k_some: { width: 1, doc: 'k != 0' },
    last: { width: 1, doc: 'the first segment is one beat' },
    seg_left: { width: 16, doc: 'ULPDU octets of the first segment' },
    msg_left: { width: 32, doc: 'payload octets after it' },
    slack: { width: slackBits(W), doc: '(W − phase) − k: the first beat against the data it finds' },
  });

/**
 * Plans the first beat of a message of `size` payload octets at `phase` (its address mod W), with
 * 18-octet headers when `untagged` is 1 (null: always tagged), for segmentStartLayout(W): a
 * caller that knows the message before it starts computes this ahead, so start() is registers.
 */
export function segmentStart(W: number, untagged: Expr | null, size: Expr, phase: Expr, mtu: SegmentMtu): Expr {
  const f = firstSegmentBeat(W, untagged, size, mtu);
  const sw = slackBits(W);
  const avail = lit(sw, W).sub(phase.zext(sw));
  return segmentStartLayout(W).pack({
    fits: f.fits,
    k: f.k,
    k_some: f.kOf((x) => x.ne(0)),
    last: f.last,
    seg_left: f.segLeft,
    msg_left: f.msgLeft,
    slack: f.kOf((x) => avail.sub(x.zext(sw))),
  });
}

export interface Segmenter {
  /** The beat source for the output register. */
  readonly beat: BeatSource;
  /** The current segment is the message's last (L = 1). */
  readonly last: Signal;
  /** Inside sync(): take the request (the message's STag and starting TO; TO 0 for untagged). */
  start(stag: Expr, to: Expr): void;
  /** Inside sync(): reads, FIFO, segment state; `onLast` runs with the message's last beat. */
  sync(onLast: () => void): void;
}

export interface ReadPort {
  readonly valid: Signal;
  readonly ready: Signal;
  readonly addr: Signal;
  readonly dataValid: Signal;
  readonly data: Signal;
}

/**
 * Declares the W-octet host memory read port: rd_valid / rd_ready / rd_addr (a multiple of W),
 * then rd_data_valid / rd_data, in read order, at least a cycle after the handshake, always accepted.
 */
export function readPort(m: ModuleBuilder, W: number): ReadPort {
  const g = 'Host memory read (W-octet beats)';
  return {
    valid: m.output('rd_valid', 1, { group: g }),
    ready: m.input('rd_ready', 1, { group: g }),
    addr: m.output('rd_addr', 64, { group: g, doc: 'a multiple of W' }),
    dataValid: m.input('rd_data_valid', 1, { group: g, doc: 'always accepted; in read order, at least 1 cycle after the read handshake' }),
    data: m.input('rd_data', 8 * W, { group: g, doc: 'lane j = octet at rd_addr + j' }),
  };
}

/** Lanes of a beat a segment header may cover: outputRegister's overlayLanes for the segmenter's beats. */
export const segmentOverlayLanes = (W: number, untagged: boolean): number => Math.min(W, untagged ? UNTAGGED_HEADER_SIZE : TAGGED_HEADER_SIZE);

/** Octets of an `h`-octet header in beat `b` of a segment. */
const headerLanesIn = (W: number, h: number, b: number): number => Math.max(0, Math.min(W, h - b * W));

export function segmenter(m: ModuleBuilder, c: SegmenterConfig): Segmenter {
  const { W, depth, prefix: p } = c;
  const lw = Math.log2(W);
  const aw = Math.log2(depth);
  const maxHeader = c.untagged ? UNTAGGED_HEADER_SIZE : TAGGED_HEADER_SIZE;
  const headerBeats = Math.ceil(maxHeader / W);

  // ---- Fetch: a queue of messages, read back to back -------------------------------------------
  const f = c.fetch;
  // ⌈(size + phase) / W⌉ in one adder: the phase and W − 1 are summed on the side (lw + 1 bits).
  const phaseUp = f.addr.slice(lw - 1, 0).zext(lw + 1).add(W - 1);
  const endUp = f.size.zext(33).add(phaseUp.zext(33));
  // A message has beats to read when its size is not 0 (then fetch_reads >= 1): the push waits
  // for no sum, and fetch_reads (0 for size 0) is read only with a push.
  const fetchBeats = m.let('fetch_reads', endUp.slice(32, lw).zext(33), { doc: 'memory beats of the message pushed on fetch (size != 0)' });
  const fetchPush = m.let('fetch_push', f.valid.and(f.size.ne(0)), { doc: 'a message with payload to read is pushed' });
  const rdNext = m.reg('rd_next_addr', 64 - lw, { doc: 'beat address (address / W) of the next read' });
  const rdLeft = m.reg('rd_left', 33, { reset: 0, doc: "beats of the fetcher's message still to read" });
  // rd_left's two values the fetcher decides on, registered with it (no 33-bit compare there).
  const rdSome = m.reg('rd_left_some', 1, { reset: 0, doc: 'rd_left != 0' });
  const rdOne = m.reg('rd_left_one', 1, { reset: 0, doc: 'rd_left == 1' });
  // A message pushed on fetch is one beat when its octets end within the first: size + phase <= W.
  // As size <= W − phase: the top bits clear and a compare of lw + 1 bits, not a sum's carry.
  const fetchOne = f.size
    .ne(0)
    .and(f.size.slice(f.size.width - 1, lw + 1).eq(0))
    .and(f.size.slice(lw, 0).le(lit(lw + 1, W).sub(f.addr.slice(lw - 1, 0).zext(lw + 1))));
  const reserved = m.reg('fifo_reserved', aw + 1, { reset: 0, doc: 'reads issued and not yet consumed (in flight or in the FIFO)' });
  const segRdValid = m.let(`${p}_rd_valid`, c.fetchGate.and(rdSome).and(reserved.lt(depth)));
  const segRdFire = m.let(`${p}_rd_fire`, segRdValid.and(c.rd.ready));
  // The fetcher's next message: from the queue, or straight from the push when the queue is empty
  // and the fetcher free (always, with no queue).
  const fetchNext = ((): { readonly bypass: Expr; readonly queue: { readonly pop: Expr; readonly head: Expr } | null } => {
    if (f.queue === 0) return { bypass: fetchPush, queue: null };
    const fetchFree = m.let('fetch_free', rdSome.not().or(rdOne.and(segRdFire)), { doc: "the fetcher's message is read by the end of this cycle" });
    const fqEmpty = m.wire('fetch_q_empty', 1);
    const bypass = m.let('fetch_bypass', fetchFree.and(fqEmpty).and(fetchPush));
    const pop = m.let('fetch_q_pop', fetchFree.and(fqEmpty.not()));
    const depthQ = 1 << Math.ceil(Math.log2(Math.max(2, f.queue)));
    const fq = fifo(m, 'fetch_q', 64 - lw + 34, depthQ, { push: fetchPush.and(bypass.not()), data: cat(f.addr.slice(63, lw), fetchOne, fetchBeats), pop });
    m.assign(fqEmpty, fq.empty);
    return { bypass, queue: { pop, head: fq.head } };
  })();
  const shared = c.sharedRead;
  const rdAddr = cat(rdNext, lit(lw, 0));
  m.assign(c.rd.valid, shared ? segRdValid.or(shared.valid) : segRdValid);
  m.assign(c.rd.addr, shared ? mux(shared.owns, shared.addr, rdAddr) : rdAddr);

  // ---- Data FIFO: block RAM, its read register the head (fifo-bram.ts) -----------------------
  const push = m.let('fifo_push', shared ? c.rd.dataValid.and(shared.owns.not()) : c.rd.dataValid);
  const pop = m.wire('fifo_pop', 1);
  const { head, headValid } = bramFifo(m, 'fifo', 8 * W, depth, { push, data: c.rd.data, pop });

  // Segment state. Positions are in the "virtual" stream whose octet 0 is the first octet of the
  // first memory beat; `avail` = (end of the beats consumed so far) − (next payload octet) + W,
  // in [1, 2W]: the held beat covers the W octets before that end.
  //
  // Timing: what a beat needs is registered with the beat before it (its payload octets k, its
  // header lanes, its rotate phase, whether it ends the segment), so the cycle's decision (emit)
  // is a compare of two registers, and the next values are picked from candidates computed from
  // registers in parallel (the next beat of this segment, the first beat of the next segment,
  // the first of a new message). The next segment's first beat is planned from msg_left a cycle
  // ahead (seg_nx_*): after a segment of one beat (cfg_mulpdu <= W) the plan is a cycle late and
  // the next segment waits that cycle.
  const dw = lw + 2;
  const kw = lw + 1;
  const beatSaturate = Math.max(2, headerBeats);
  const segLeft = m.reg('seg_left', 16, { doc: 'ULPDU octets of the current segment still to send' });
  const segLast = m.reg('seg_last', 1, { doc: 'the current segment is the last (L = 1)' });
  const segBeat = m.reg('seg_beat', 2, { doc: `beat index within the segment, saturating at ${beatSaturate}` });
  const msgLeft = m.reg('msg_left', 32, { doc: 'payload octets after the current segment' });
  const stag = m.reg(`${p}_stag`, 32);
  // With toCarrySelect the TO's low 16 bits add the room and its high 48 take the carry from a
  // register that holds them plus one, so no 64-bit carry chain sits between two registers.
  const toSplit = c.toCarrySelect
    ? {
        lo: m.reg(`${p}_to_lo`, 16, { doc: 'TO of the current segment, bits 15..0' }),
        hi: m.reg(`${p}_to_hi`, 48, { doc: 'bits 63..16' }),
        hiInc: m.reg(`${p}_to_hi_inc`, 48, { doc: 'to_hi + 1' }),
      }
    : null;
  const to = toSplit ? m.let(`${p}_to`, cat(toSplit.hi, toSplit.lo), { doc: 'TO of the current segment' }) : m.reg(`${p}_to`, 64, { doc: 'TO of the current segment' });
  const avail = m.reg(`${p}_avail`, dw, { doc: 'consumed-but-unsent octets + W (see above)' });
  const pos = m.reg(`${p}_pos`, lw, { doc: 'virtual position of the next payload octet, mod W' });
  const hold = m.reg(`${p}_hold`, 8 * W, { doc: 'the last memory beat consumed' });
  const k = m.reg(`${p}_payload_octets`, kw, { doc: 'payload octets in this beat' });
  const hdrLanes = m.reg(`${p}_hdr_lanes`, kw, { doc: 'header octets in this beat' });
  const phase = m.reg(`${p}_phase`, lw, { doc: 'rotate of the payload: pos − hdr_lanes, mod W' });
  const lastBeat = m.reg(`${p}_last_beat`, 1, { doc: 'this beat ends the segment (seg_left <= W)' });
  // The beat's two FIFO decisions (its payload reaches into the head; past it) are compares of k
  // and avail; they gate emit, which everything else waits for. So avail − k is kept beside them
  // (a bit wider, signed: in [1 − W, 2W]), set with them from the same candidates: the decisions
  // are then its sign and its top bits, no compare behind the registers.
  const sw = slackBits(W);
  const slack = m.reg(`${p}_slack`, sw, { doc: 'avail − payload_octets, two\'s complement' });
  const kSome = m.reg(`${p}_payload_some`, 1, { doc: 'payload_octets != 0' });

  // Header lanes in beat b: the tagged header fills beat 0 (and 6 lanes of beat 1 at W = 8);
  // the untagged one 18 octets from lane 0.
  const lanesLit = (n: number) => lit(kw, n);
  const lanesIn = (b: number): Expr => {
    const t = headerLanesIn(W, TAGGED_HEADER_SIZE, b);
    const u = headerLanesIn(W, UNTAGGED_HEADER_SIZE, b);
    return c.untagged && t !== u ? mux(c.untagged, lanesLit(u), lanesLit(t)) : lanesLit(t);
  };

  /**
   * The first beat of a segment of a message with `left` payload octets still to send, for each
   * header size (the untagged one only with `c.untagged`), picked by the message's kind last.
   */
  const variants = c.untagged ? [TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE] : [TAGGED_HEADER_SIZE];
  const hdrSize = (h: number) =>
    h === TAGGED_HEADER_SIZE
      ? m.constant('TAGGED_HDR', 16, h, 'tagged DDP header octets (RFC 5041 section 4.2)')
      : m.constant('UNTAGGED_HDR', 16, h, 'untagged DDP header octets (RFC 5041 section 4.3)');
  const sizes = variants.map(hdrSize);
  // With a MULPDU per message (startMulpdu), the message's rooms are registered at start from
  // the starting request's, so no subtraction sits before the plan's compares and the TO's add.
  const rooms = variants.map((h, i) =>
    c.startMulpdu
      ? m.reg(`${p}_room_${h}`, 16, { doc: `payload octets of a full segment of the message with a ${h}-octet header` })
      : m.let(`seg_room_${h}`, c.cfgMulpdu.sub(sizes[i]!), { doc: `payload octets of a full segment with a ${h}-octet header` }),
  );
  const byKind = (vs: readonly Expr[]): Expr => (vs.length === 1 ? vs[0]! : mux(c.untagged!, vs[1]!, vs[0]!));
  const room = m.let('seg_room', byKind(rooms), { doc: 'payload octets of a full segment: MULPDU − the header' });
  const firstBeat = (left: Expr, mtu: SegmentMtu = { mulpdu: c.cfgMulpdu, rooms }) => firstSegmentBeat(W, c.untagged, left, mtu, (h) => sizes[variants.indexOf(h)]!);
  const hdrLanes0 = lanesIn(0);
  const availAt = (phase: Expr) => lit(sw, W).sub(phase.zext(sw));

  // The next segment's first beat, planned from msg_left (valid a cycle after msg_left is set).
  const plan = firstBeat(msgLeft);
  const nx = {
    fits: m.reg('seg_nx_fits', 1, { doc: 'the next segment is the last' }),
    k: m.reg('seg_nx_k', kw, { doc: "payload octets in the next segment's first beat" }),
    kSome: m.reg('seg_nx_k_some', 1, { doc: 'seg_nx_k != 0' }),
    last: m.reg('seg_nx_last_beat', 1, { doc: 'the next segment is one beat' }),
    segLeft: m.reg('seg_nx_left', 16, { doc: 'ULPDU octets of the next segment' }),
    msgLeft: m.reg('seg_nx_msg_left', 32, { doc: 'payload octets after the next segment' }),
    valid: m.reg('seg_nx_valid', 1, { reset: 0, doc: 'seg_nx_* are planned from the current msg_left' }),
  };

  // The next beat of this segment: a full one so far (seg_left > W), W octets less.
  const nextBeat = m.let(`${p}_next_beat`, mux(segBeat.eq(beatSaturate), segBeat, segBeat.add(1)));
  let nextLanes: Expr = lanesLit(0);
  for (let b = headerBeats - 1; b >= 1; b--) nextLanes = mux(nextBeat.eq(b), lanesIn(b), nextLanes);
  // seg_left against 2W as bit tests (LUTs, no carry chain behind the emit): >= 2W when a bit
  // above lw is set; <= 2W also when it is exactly 2W.
  const atLeast2W = segLeft.slice(15, lw + 1).ne(0);
  const atMost2W = atLeast2W.not().or(segLeft.eq(2 * W));
  const nextOctets = mux(atLeast2W, lit(kw, W), segLeft.slice(lw - 1, 0).zext(kw));

  const kx = k.zext(dw);
  const hx = hdrLanes.zext(dw);
  // k + W > avail and k > avail, from slack = avail − k: below W (the top bits clear, or negative); negative.
  const needPop = m.let(`${p}_need_pop`, kSome.and(slack.bit(sw - 1).or(slack.slice(sw - 2, lw).eq(0))), { doc: 'the last payload octet is in the FIFO head' });
  const needPrefetch = m.let(`${p}_need_prefetch`, slack.bit(sw - 1), { doc: 'the payload octets straddle the head and the beat after it' });
  const planLate = m.let(`${p}_plan_late`, lastBeat.and(segLast.not()).and(nx.valid.not()), { doc: 'the next segment is not planned yet' });
  const prefetch = m.let(`${p}_prefetch`, c.active.and(needPrefetch).and(headValid));
  const emit = m.let(`${p}_emit`, c.active.and(needPrefetch.not()).and(needPop.not().or(headValid)).and(c.outFree).and(planLate.not()));
  m.assign(pop, prefetch.or(emit.and(needPop)));
  const segEnd = m.let(`${p}_seg_end`, emit.and(lastBeat));

  // Lane j of the beat is virtual octet (pos − hdr_lanes + j) relative to the beat holding lane 0:
  // lane (phase + j) of {hi, lo}. lo is the held beat unless lane 0 lies in the head
  // (avail + hdr <= W); hi is the head unless the payload is all in the held beat (avail + hdr >
  // 2W). The output register's realign stage rotates them and lays the header over lanes below.
  const loHead = m.let(`${p}_lo_head`, avail.add(hx).le(W), { doc: 'lane 0 of the beat lies in the FIFO head' });
  const hiHold = m.let(`${p}_hi_hold`, avail.add(hx).gt(2 * W), { doc: 'the payload is all in the held beat' });
  const header = c.header(segLast, stag, to);
  if (header.length !== maxHeader) throw new Error(`the segment header is ${maxHeader} octets, got ${header.length}`);
  const overlayLanes = segmentOverlayLanes(W, c.untagged !== null);
  const overlay = Array.from({ length: overlayLanes }, (_, j) => {
    let octet: Expr = lit(8, 0);
    let hit: Expr = lit(1, 0);
    for (let b = 0; b * W + j < maxHeader; b++) {
      const i = b * W + j;
      // Octets 14..17 (the MO) are header only in untagged segments.
      const sel = i < TAGGED_HEADER_SIZE || !c.untagged ? segBeat.eq(b) : segBeat.eq(b).and(c.untagged);
      octet = mux(sel, header[i]!, octet);
      hit = hit.or(sel);
    }
    return { octet, hit };
  });

  /** Loads the first beat of a segment (from firstBeat() or the plan) at virtual position `at`, with its slack. */
  const loadSegment = (f: { fits: Expr; k: Expr; kSome: Expr; last: Expr; segLeft: Expr; msgLeft: Expr }, at: Expr, s: Expr) => {
    m.set(slack, s);
    m.set(kSome, f.kSome);
    m.set(segLast, f.fits);
    m.set(segLeft, f.segLeft);
    m.set(msgLeft, f.msgLeft);
    m.set(segBeat, 0);
    m.set(k, f.k);
    m.set(lastBeat, f.last);
    m.set(hdrLanes, hdrLanes0);
    m.set(phase, at.sub(hdrLanes0.slice(lw - 1, 0)));
  };
  const { phase: srcPhase, size } = c.request;
  if (c.startMulpdu && c.startMulpdu.rooms.length !== variants.length) throw new Error(`startMulpdu needs ${variants.length} rooms`);
  // The first segment: planned with the request (request.first), or here from the starting request.
  const first = ((): { fits: Expr; k: Expr; kSome: Expr; last: Expr; segLeft: Expr; msgLeft: Expr; slack: Expr } => {
    const r = c.request.first;
    if (r) return { fits: r.fits, k: r.k, kSome: r.k_some, last: r.last, segLeft: r.seg_left, msgLeft: r.msg_left, slack: r.slack };
    const f = firstBeat(size, c.startMulpdu);
    return { ...f, kSome: f.kOf((x) => x.ne(0)), slack: f.kOf((x) => availAt(srcPhase).sub(x.zext(sw))) };
  })();
  return {
    beat: {
      emit,
      owns: c.active,
      lo: mux(loHead, head, hold),
      hi: mux(hiHold, hold, head),
      phase,
      overlay: { mask: cat(...overlay.map((x) => x.hit).reverse()), octets: laneVector(overlay.map((x) => x.octet)) },
      // A beat before the last is full; the last has 1..W octets (seg_left <= W): lw + 1 bits decide.
      keep: lastBeat.not().repeat(W).or(keepFor(W, segLeft.slice(lw, 0))),
      last: lastBeat,
      left: segLeft,
    },
    last: segLast,
    start(s, t) {
      m.set(stag, s);
      if (toSplit) {
        m.set(toSplit.lo, t.slice(15, 0));
        m.set(toSplit.hi, t.slice(63, 16));
        m.set(toSplit.hiInc, t.slice(63, 16).add(1));
      } else m.set(to as Signal, t);
      if (c.startMulpdu) rooms.forEach((r, i) => m.set(r as Signal, c.startMulpdu!.rooms[i]!));
      m.set(avail, lit(dw, W).sub(srcPhase.zext(dw)));
      m.set(pos, srcPhase);
      loadSegment(first, srcPhase, first.slack);
    },
    sync(onLast) {
      m.when(segRdFire, () => {
        m.set(rdNext, rdNext.add(1));
        m.set(rdLeft, rdLeft.sub(1));
        m.set(rdSome, rdOne.not());
        m.set(rdOne, rdLeft.eq(2));
      });
      // The next message: from the queue, or straight from the push (later sets win).
      const q = fetchNext.queue;
      if (q)
        m.when(q.pop, () => {
          m.set(rdNext, q.head.slice(64 - lw + 33, 34));
          m.set(rdLeft, q.head.slice(32, 0));
          m.set(rdSome, 1);
          m.set(rdOne, q.head.bit(33));
        });
      m.when(fetchNext.bypass, () => {
        m.set(rdNext, f.addr.slice(63, lw));
        m.set(rdLeft, fetchBeats);
        m.set(rdSome, 1);
        m.set(rdOne, fetchOne);
      });
      m.when(pop, () => m.set(hold, head));
      m.set(reserved, reserved.add(segRdFire.zext(aw + 1)).sub(pop.zext(aw + 1)));

      // The plan follows msg_left; start() is called while inactive, so the first plan of a
      // message is a cycle late, as after a segment end.
      m.set(nx.fits, plan.fits);
      m.set(nx.k, plan.k);
      m.set(nx.kSome, plan.kOf((x) => x.ne(0)));
      m.set(nx.last, plan.last);
      m.set(nx.segLeft, plan.segLeft);
      m.set(nx.msgLeft, plan.msgLeft);
      m.set(nx.valid, c.active.and(segEnd.and(segLast.not()).not()));

      m.when(prefetch, () => {
        m.set(avail, avail.add(W));
        m.set(slack, slack.add(W));
      });
      m.when(emit, () => {
        const at = pos.add(k.slice(lw - 1, 0));
        m.set(avail, mux(needPop, avail.add(W).sub(kx), avail.sub(kx)));
        // The new avail is slack (+ W with a pop); the new beat's slack subtracts its k.
        const availNext = mux(needPop, slack.add(W), slack);
        const nextK = nextOctets.sub(nextLanes);
        m.set(pos, at);
        m.when(
          lastBeat,
          () =>
            m.when(segLast, onLast, () => {
              if (toSplit) {
                const lo = toSplit.lo.zext(17).add(room.zext(17));
                m.set(toSplit.lo, lo.slice(15, 0));
                m.when(lo.bit(16), () => {
                  m.set(toSplit.hi, toSplit.hiInc);
                  m.set(toSplit.hiInc, toSplit.hiInc.add(1));
                });
              } else m.set(to as Signal, to.add(room.zext(64)));
              loadSegment(nx, at, availNext.sub(nx.k.zext(sw)));
            }),
          () => {
            m.set(segLeft, segLeft.sub(W));
            m.set(segBeat, nextBeat);
            m.set(k, nextK);
            m.set(kSome, nextK.ne(0));
            m.set(slack, availNext.sub(nextK.zext(sw)));
            m.set(lastBeat, atMost2W);
            m.set(hdrLanes, nextLanes);
            m.set(phase, at.sub(nextLanes.slice(lw - 1, 0)));
          },
        );
      });
    },
  };
}
