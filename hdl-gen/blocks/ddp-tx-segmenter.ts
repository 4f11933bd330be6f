import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { keepFor, type BeatSource } from './ddp-tx-output';
import { laneVector } from './rdmap-tx-resp-ulpdu';

/**
 * DDP segmentation of a message whose payload is in host memory (RFC 5041 §5.2; the model's
 * `segmentMessage`, ts-model/ddp/segmenter.ts), shared by rdmap_tx_resp_w<W> (Read Responses) and
 * ddp_tx_w<W> (RDMA Writes, Sends). A generator function: it adds its registers to the calling
 * module, which starts a message with `start()` and runs `sync()` in its register process.
 *
 * Fetch: W-octet aligned reads of the payload, issued while (reads issued − beats consumed) <
 * `depth`, the depth of the data FIFO, so `depth` reads may be in flight; data comes back in order,
 * at least a cycle after the handshake, and is always accepted.
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
 * straddle two memory beats. The first read goes out the cycle after `start()`.
 */
export interface SegmenterConfig {
  readonly W: number;
  /** Data FIFO depth in beats; also the bound on reads in flight. */
  readonly depth: number;
  /** Name prefix of the segment-state registers and wires (`rr` in rdmap_tx_resp). */
  readonly prefix: string;
  /** The block is sending a segmented message: reads and beats go out only then. */
  readonly active: Expr;
  /** The output register takes a beat this cycle. */
  readonly outFree: Expr;
  readonly cfgMulpdu: Expr;
  /** 16 bits: this message's DDP header octets (14 or 18). */
  readonly hdrSize: Expr;
  /** 1 while the message is untagged (18-octet headers); null when every message is tagged. */
  readonly untagged: Expr | null;
  /** The request port: where its fields come from when `start()` runs, and its name prefix. */
  readonly request: { readonly prefix: string; readonly what: string; readonly addr: Expr; readonly size: Expr };
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

/** Octets of an `h`-octet header in beat `b` of a segment. */
const headerLanesIn = (W: number, h: number, b: number): number => Math.max(0, Math.min(W, h - b * W));

export function segmenter(m: ModuleBuilder, c: SegmenterConfig): Segmenter {
  const { W, depth, prefix: p } = c;
  const lw = Math.log2(W);
  const aw = Math.log2(depth);
  const maxHeader = c.untagged ? UNTAGGED_HEADER_SIZE : TAGGED_HEADER_SIZE;
  const headerBeats = Math.ceil(maxHeader / W);

  const room = m.let('seg_room', c.cfgMulpdu.sub(c.hdrSize), { doc: `payload octets of a full segment: MULPDU - ${c.untagged ? 'the header (14 or 18)' : TAGGED_HEADER_SIZE}` });
  const rdNext = m.reg('rd_next_addr', 64, { doc: 'address of the next beat to read' });
  const rdLeft = m.reg('rd_left', 33, { reset: 0, doc: 'beats still to read' });
  const reserved = m.reg('fifo_reserved', aw + 1, { reset: 0, doc: 'reads issued and not yet consumed (in flight or in the FIFO)' });
  const segRdValid = m.let(`${p}_rd_valid`, c.active.and(rdLeft.ne(0)).and(reserved.lt(depth)));
  const segRdFire = m.let(`${p}_rd_fire`, segRdValid.and(c.rd.ready));
  const shared = c.sharedRead;
  m.assign(c.rd.valid, shared ? segRdValid.or(shared.valid) : segRdValid);
  m.assign(c.rd.addr, shared ? mux(shared.owns, shared.addr, rdNext) : rdNext);

  const fifoMem = m.memory('rd_fifo', 8 * W, depth);
  const wptr = m.reg('fifo_wptr', aw, { reset: 0 });
  const rptr = m.reg('fifo_rptr', aw, { reset: 0 });
  const count = m.reg('fifo_count', aw + 1, { reset: 0, doc: 'beats in the FIFO' });
  const push = m.let('fifo_push', shared ? c.rd.dataValid.and(shared.owns.not()) : c.rd.dataValid);
  m.memoryWrite(fifoMem, push, wptr, c.rd.data);
  const head = m.let('fifo_head', fifoMem.read(rptr));
  const headValid = m.let('fifo_head_valid', count.ne(0));

  // Segment state. Positions are in the "virtual" stream whose octet 0 is the first octet of the
  // first memory beat; `avail` = (end of the beats consumed so far) − (next payload octet) + W,
  // in [1, 2W]: the held beat covers the W octets before that end.
  const dw = lw + 2;
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

  // Header lanes in this beat: the tagged header fills beat 0 (and 6 lanes of beat 1 at W = 8);
  // the untagged one 18 octets from lane 0.
  const lanesLit = (n: number) => lit(lw + 1, n);
  const lanesIn = (b: number): Expr => {
    const t = headerLanesIn(W, TAGGED_HEADER_SIZE, b);
    const u = headerLanesIn(W, UNTAGGED_HEADER_SIZE, b);
    return c.untagged && t !== u ? mux(c.untagged, lanesLit(u), lanesLit(t)) : lanesLit(t);
  };
  let lanesExpr: Expr = lanesLit(0);
  for (let b = headerBeats - 1; b >= 0; b--) lanesExpr = mux(segBeat.eq(b), lanesIn(b), lanesExpr);
  const hdrLanes = m.let(`${p}_hdr_lanes`, lanesExpr);
  const beatOctets = m.let(`${p}_beat_octets`, mux(segLeft.ge(W), lit(lw + 1, W), segLeft.slice(lw, 0)), { doc: 'ULPDU octets in this beat' });
  const k = m.let(`${p}_payload_octets`, beatOctets.sub(hdrLanes), { doc: 'payload octets in this beat' });
  const kx = k.zext(dw);
  const hx = hdrLanes.zext(dw);
  const needPop = m.let(`${p}_need_pop`, k.ne(0).and(kx.add(W).gt(avail)), { doc: 'the last payload octet is in the FIFO head' });
  const needPrefetch = m.let(`${p}_need_prefetch`, kx.gt(avail), { doc: 'the payload octets straddle the head and the beat after it' });
  const prefetch = m.let(`${p}_prefetch`, c.active.and(needPrefetch).and(headValid));
  const emit = m.let(`${p}_emit`, c.active.and(needPrefetch.not()).and(needPop.not().or(headValid)).and(c.outFree));
  const pop = m.let('fifo_pop', prefetch.or(emit.and(needPop)));
  const segEnd = m.let(`${p}_seg_end`, emit.and(segLeft.le(W)));

  // Lane j of the beat is virtual octet (pos − hdr_lanes + j) relative to the beat holding lane 0:
  // rotate {hi, lo} right by that phase. lo is the held beat unless lane 0 lies in the head
  // (avail + hdr <= W); hi is the head unless the payload is all in the held beat (avail + hdr > 2W).
  const phase = m.let(`${p}_phase`, pos.sub(hdrLanes.slice(lw - 1, 0)));
  const lo = mux(avail.add(hx).le(W), head, hold);
  const hi = mux(avail.add(hx).gt(2 * W), hold, head);
  const rotated = m.let(`${p}_rotated`, cat(hi, lo).shr(cat(phase, lit(3, 0))).slice(8 * W - 1, 0));
  const header = c.header(segLast, stag, to);
  if (header.length !== maxHeader) throw new Error(`the segment header is ${maxHeader} octets, got ${header.length}`);
  const lanes = Array.from({ length: W }, (_, j) => {
    let lane = rotated.slice(8 * j + 7, 8 * j);
    for (let b = 0; b * W < maxHeader; b++) {
      const i = b * W + j;
      if (i >= maxHeader) continue;
      // Octets 14..17 (the MO) are header only in untagged segments.
      const sel = i < TAGGED_HEADER_SIZE || !c.untagged ? segBeat.eq(b) : segBeat.eq(b).and(c.untagged);
      lane = mux(sel, header[i]!, lane);
    }
    return lane;
  });

  // First segment of a message, and each next one: min(room, what is left).
  const startSeg = (left: Expr) => {
    const fits = left.le(room.zext(32));
    m.set(segLast, fits);
    m.set(segLeft, mux(fits, left.slice(15, 0), room).add(c.hdrSize));
    m.set(msgLeft, mux(fits, lit(32, 0), left.sub(room.zext(32))));
    m.set(segBeat, 0);
  };
  const { addr, size } = c.request;
  const srcPhase = addr.slice(lw - 1, 0);
  const lastOctet = size.zext(33).add(srcPhase.zext(33)).sub(1);
  const reads = m.let(`${c.request.prefix}_reads`, mux(size.eq(0), lit(33, 0), lastOctet.slice(32, lw).zext(33).add(1)), { doc: `memory beats ${c.request.what} covers` });

  return {
    beat: { emit, data: laneVector(lanes), keep: keepFor(W, beatOctets), last: segLeft.le(W), left: segLeft },
    last: segLast,
    start(s, t) {
      m.set(stag, s);
      m.set(to, t);
      m.set(rdNext, cat(addr.slice(63, lw), lit(lw, 0)));
      m.set(rdLeft, reads);
      m.set(avail, lit(dw, W).sub(srcPhase.zext(dw)));
      m.set(pos, srcPhase);
      startSeg(size);
    },
    sync(onLast) {
      m.when(segRdFire, () => {
        m.set(rdNext, rdNext.add(W));
        m.set(rdLeft, rdLeft.sub(1));
      });
      m.when(push, () => m.set(wptr, wptr.add(1)));
      m.when(pop, () => {
        m.set(rptr, rptr.add(1));
        m.set(hold, head);
      });
      m.set(count, count.add(push.zext(aw + 1)).sub(pop.zext(aw + 1)));
      m.set(reserved, reserved.add(segRdFire.zext(aw + 1)).sub(pop.zext(aw + 1)));

      m.when(prefetch, () => m.set(avail, avail.add(W)));
      m.when(emit, () => {
        m.set(avail, mux(needPop, avail.add(W).sub(kx), avail.sub(kx)));
        m.set(pos, pos.add(k.slice(lw - 1, 0)));
        m.set(segLeft, segLeft.sub(beatOctets.zext(16)));
        m.set(segBeat, mux(segBeat.eq(beatSaturate), segBeat, segBeat.add(1)));
        m.when(segEnd, () =>
          m.when(segLast, onLast, () => {
            m.set(to, to.add(room.zext(64)));
            startSeg(msgLeft);
          }),
        );
      });
    },
  };
}
