import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { keepFor, type BeatSource } from './ddp-tx-output';
import { fifo } from '../lib/fifo';
import { bramFifo } from '../lib/fifo-bram';
import { laneVector } from './rdmap-tx-resp-ulpdu';
import { laneShiftRight } from '../lib/lane-shift';

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
  readonly fetch: { readonly valid: Expr; readonly addr: Expr; readonly size: Expr; readonly queue: number };
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
  /** The message `start()` takes: its payload's address mod W (lw bits) and its size (32 bits). */
  readonly request: { readonly phase: Expr; readonly size: Expr };
  /** The memory read port (readPort()). */
  readonly rd: ReadPort;
  /** Another reader of the same port: it owns rd_addr and the returning data while `owns`. */
  readonly sharedRead: { readonly valid: Expr; readonly addr: Expr; readonly owns: Expr } | null;
  /** The header octets in wire order (14, or 18 when `untagged` is not null) for a segment. */
  readonly header: (last: Expr, stag: Expr, to: Expr) => Expr[];
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
  const lastOctet = f.size.zext(33).add(f.addr.slice(lw - 1, 0).zext(33)).sub(1);
  const fetchBeats = m.let('fetch_reads', mux(f.size.eq(0), lit(33, 0), lastOctet.slice(32, lw).zext(33).add(1)), { doc: 'memory beats of the message pushed on fetch' });
  const fetchPush = m.let('fetch_push', f.valid.and(fetchBeats.ne(0)), { doc: 'a message with payload to read is pushed' });
  const rdNext = m.reg('rd_next_addr', 64 - lw, { doc: 'beat address (address / W) of the next read' });
  const rdLeft = m.reg('rd_left', 33, { reset: 0, doc: "beats of the fetcher's message still to read" });
  // rd_left's two values the fetcher decides on, registered with it (no 33-bit compare there).
  const rdSome = m.reg('rd_left_some', 1, { reset: 0, doc: 'rd_left != 0' });
  const rdOne = m.reg('rd_left_one', 1, { reset: 0, doc: 'rd_left == 1' });
  // A message pushed on fetch is one beat when its octets end within the first: size + phase <= W.
  const fetchOne = f.size.ne(0).and(f.size.zext(33).add(f.addr.slice(lw - 1, 0).zext(33)).le(W));
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
  const to = m.reg(`${p}_to`, 64, { doc: 'TO of the current segment' });
  const avail = m.reg(`${p}_avail`, dw, { doc: 'consumed-but-unsent octets + W (see above)' });
  const pos = m.reg(`${p}_pos`, lw, { doc: 'virtual position of the next payload octet, mod W' });
  const hold = m.reg(`${p}_hold`, 8 * W, { doc: 'the last memory beat consumed' });
  const k = m.reg(`${p}_payload_octets`, kw, { doc: 'payload octets in this beat' });
  const hdrLanes = m.reg(`${p}_hdr_lanes`, kw, { doc: 'header octets in this beat' });
  const phase = m.reg(`${p}_phase`, lw, { doc: 'rotate of the payload: pos − hdr_lanes, mod W' });
  const lastBeat = m.reg(`${p}_last_beat`, 1, { doc: 'this beat ends the segment (seg_left <= W)' });

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
  const rooms = variants.map((h, i) => m.let(`seg_room_${h}`, c.cfgMulpdu.sub(sizes[i]!), { doc: `payload octets of a full segment with a ${h}-octet header` }));
  const byKind = (vs: readonly Expr[]): Expr => (vs.length === 1 ? vs[0]! : mux(c.untagged!, vs[1]!, vs[0]!));
  const room = m.let('seg_room', byKind(rooms), { doc: 'payload octets of a full segment: MULPDU − the header' });
  const firstBeat = (left: Expr, mtu: { readonly mulpdu: Expr; readonly rooms: readonly Expr[] } = { mulpdu: c.cfgMulpdu, rooms }) => {
    const each = variants.map((h, i) => {
      const fits = left.le(mtu.rooms[i]!.zext(32));
      // Payload octets in beat 0: min(payload + h, W) − min(h, W); h >= W leaves none.
      const kFit = W > h ? mux(left.ge(W - h), lit(kw, W - h), left.slice(lw, 0)) : lit(kw, 0);
      const kFull = W > h ? mux(mtu.mulpdu.ge(W), lit(kw, W - h), mtu.rooms[i]!.slice(lw, 0)) : lit(kw, 0);
      return {
        fits,
        k: mux(fits, kFit, kFull),
        last: mux(fits, W > h ? left.le(W - h) : lit(1, 0), mtu.mulpdu.le(W)),
        segLeft: mux(fits, left.slice(15, 0).add(sizes[i]!), mtu.mulpdu),
        msgLeft: mux(fits, lit(32, 0), left.sub(mtu.rooms[i]!.zext(32))),
      };
    });
    const pick = (f: keyof (typeof each)[number]) => byKind(each.map((e) => e[f]));
    return { fits: pick('fits'), k: pick('k'), last: pick('last'), segLeft: pick('segLeft'), msgLeft: pick('msgLeft') };
  };
  const hdrLanes0 = lanesIn(0);

  // The next segment's first beat, planned from msg_left (valid a cycle after msg_left is set).
  const plan = firstBeat(msgLeft);
  const nx = {
    fits: m.reg('seg_nx_fits', 1, { doc: 'the next segment is the last' }),
    k: m.reg('seg_nx_k', kw, { doc: "payload octets in the next segment's first beat" }),
    last: m.reg('seg_nx_last_beat', 1, { doc: 'the next segment is one beat' }),
    segLeft: m.reg('seg_nx_left', 16, { doc: 'ULPDU octets of the next segment' }),
    msgLeft: m.reg('seg_nx_msg_left', 32, { doc: 'payload octets after the next segment' }),
    valid: m.reg('seg_nx_valid', 1, { reset: 0, doc: 'seg_nx_* are planned from the current msg_left' }),
  };

  // The next beat of this segment: a full one so far (seg_left > W), W octets less.
  const nextBeat = m.let(`${p}_next_beat`, mux(segBeat.eq(beatSaturate), segBeat, segBeat.add(1)));
  let nextLanes: Expr = lanesLit(0);
  for (let b = headerBeats - 1; b >= 1; b--) nextLanes = mux(nextBeat.eq(b), lanesIn(b), nextLanes);
  const nextOctets = mux(segLeft.ge(2 * W), lit(kw, W), segLeft.slice(lw - 1, 0).zext(kw));

  const kx = k.zext(dw);
  const hx = hdrLanes.zext(dw);
  const needPop = m.let(`${p}_need_pop`, k.ne(0).and(kx.add(W).gt(avail)), { doc: 'the last payload octet is in the FIFO head' });
  const needPrefetch = m.let(`${p}_need_prefetch`, kx.gt(avail), { doc: 'the payload octets straddle the head and the beat after it' });
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

  /** Loads the first beat of a segment (from firstBeat() or the plan) at virtual position `at`. */
  const loadSegment = (f: { fits: Expr; k: Expr; last: Expr; segLeft: Expr; msgLeft: Expr }, at: Expr) => {
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
  const first = firstBeat(size, c.startMulpdu);
  return {
    beat: {
      emit,
      owns: c.active,
      lo: mux(loHead, head, hold),
      hi: mux(hiHold, hold, head),
      phase,
      overlay: { mask: cat(...overlay.map((x) => x.hit).reverse()), octets: laneVector(overlay.map((x) => x.octet)) },
      keep: keepFor(W, segLeft),
      last: lastBeat,
      left: segLeft,
    },
    last: segLast,
    start(s, t) {
      m.set(stag, s);
      m.set(to, t);
      m.set(avail, lit(dw, W).sub(srcPhase.zext(dw)));
      m.set(pos, srcPhase);
      loadSegment(first, srcPhase);
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
      m.set(nx.last, plan.last);
      m.set(nx.segLeft, plan.segLeft);
      m.set(nx.msgLeft, plan.msgLeft);
      m.set(nx.valid, c.active.and(segEnd.and(segLast.not()).not()));

      m.when(prefetch, () => m.set(avail, avail.add(W)));
      m.when(emit, () => {
        const at = pos.add(k.slice(lw - 1, 0));
        m.set(avail, mux(needPop, avail.add(W).sub(kx), avail.sub(kx)));
        m.set(pos, at);
        m.when(
          lastBeat,
          () =>
            m.when(segLast, onLast, () => {
              m.set(to, to.add(room.zext(64)));
              loadSegment(nx, at);
            }),
          () => {
            m.set(segLeft, segLeft.sub(W));
            m.set(segBeat, nextBeat);
            m.set(k, nextOctets.sub(nextLanes));
            m.set(lastBeat, segLeft.le(2 * W));
            m.set(hdrLanes, nextLanes);
            m.set(phase, at.sub(nextLanes.slice(lw - 1, 0)));
          },
        );
      });
    },
  };
}
