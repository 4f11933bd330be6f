import { cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { bramFifo } from '../lib/fifo-bram';
import { indexBits, ram } from '../lib/ram';
import { record } from '../lib/record';
import { pipelineRegister } from '../lib/stage';
import { MPA_RX_VERDICT } from './mpa-rx';
import { checkRnicWidth } from './rnic-widths';

/**
 * ULPDU reassembly behind the shared mpa_rx (mpa_rx_w<W>_q<N>): its ULPDU beats arrive
 * interleaved by TCP segment (a QP's FPDU may span segments, and another QP's segment may come
 * between), and leave whole, one ULPDU after another, each with MPA's verdict on every beat, so
 * the blocks behind it see a ULPDU as one packet and know from its first beat whether it passed.
 *
 * - Storage: a pool of PAGES pages of REASM_PAGE_BEATS beats (block RAM), a free list of pages (a
 *   FIFO of indices), a link RAM (a page's next page), and a context per QP in block RAM (the
 *   open ULPDU: its beats so far, first page and current page). A ULPDU takes pages as it arrives
 *   and gives them back as it leaves, so the pool holds partial ULPDUs of any QPs and complete
 *   ones waiting to leave, whatever their sizes.
 * - Writer: the input beat waits in a skid register (s_axis_tready a flip-flop). The open QP's
 *   context is in registers; a beat of another QP writes it back and reads the new one (a context
 *   switch: one cycle, the beat is taken in the cycle after, from the RAM's read register). A
 *   ULPDU's last beat queues it (a descriptor: QP, first page, beats, the last beat's tkeep, the
 *   verdict) in completion order; ULPDUs of one QP complete in arrival order.
 * - Reader: takes descriptors in order, reads the beats page by page (the next page's link is read
 *   when a page starts, so it is there when the page ends), gives each page back as its last beat
 *   is read, and offers the beats on m_axis through a skid buffer (tvalid, tdata, tready all
 *   registered on this side). One beat a cycle, and the next ULPDU's first beat right after the
 *   last one's.
 * - cfg_valid with cfg_qp (a new connection on that QP, taken with cfg_ready): its open ULPDU, if
 *   any, is dropped (its pages go back, nothing leaves), and its context starts empty, with the
 *   connection's cfg_rfc7306, which every beat of its ULPDUs carries out on m_rfc7306 (ddp_rx_hdr
 *   checks each ULPDU with its QP's setting). cfg_ready
 *   is low for max(N, PAGES) cycles after rst (the contexts are cleared and the pages put on the
 *   free list, one a cycle) and while a drop is under way.
 *
 * Caller's contract: no ULPDU longer than the pool; the pool holds every QP's open ULPDU at once
 * (else the writer waits for a page that only a ULPDU still arriving can free: the input stalls
 * for good). Complete ULPDUs always drain: their pages come back as they leave.
 *
 * Latency (no back-pressure, context open): a ULPDU's first beat leaves 5 cycles after its last
 * beat entered (skid 1, write 1, descriptor FIFO 2, read 1) plus the output skid; the ULPDU is
 * stored whole first (store and forward: mpa_rx's verdict comes with the last beat). Rate: a
 * beat a cycle in and out; a context switch costs one cycle on the input.
 */

/** Beats per page of the pool (a power of two). */
export const REASM_PAGE_BEATS = 8;

/** Default pool size in octets. */
export const REASM_POOL_BYTES = 32768;

export interface UlpduReasmOptions {
  readonly qps: number;
  /** Pool octets (a power of two, at least 4 pages). */
  readonly poolBytes?: number;
}

export const ulpduReasmName = (bytes: number, qps: number): string => `ulpdu_reasm_w${bytes}_q${qps}`;

/** Cycles after rst before cfg_ready: the contexts cleared and the pages put on the free list, one a cycle. */
export const ulpduReasmInitCycles = (bytes: number, qps: number, poolBytes = REASM_POOL_BYTES): number => Math.max(qps, poolBytes / (REASM_PAGE_BEATS * bytes));

export function ulpduReasmModule(bytes: number, opts: UlpduReasmOptions): Module {
  checkRnicWidth('ulpdu_reasm', bytes);
  const W = bytes;
  const N = opts.qps;
  if (!Number.isInteger(N) || N < 1) throw new RangeError(`ulpdu_reasm serves 1 or more QPs, got ${N}`);
  const poolBytes = opts.poolBytes ?? REASM_POOL_BYTES;
  const P = REASM_PAGE_BEATS;
  const pageBytes = P * W;
  if (!Number.isInteger(poolBytes) || (poolBytes & (poolBytes - 1)) !== 0 || poolBytes < 4 * pageBytes) {
    throw new RangeError(`ulpdu_reasm pool must be a power of two of at least ${4 * pageBytes} octets (4 pages of ${P} beats), got ${poolBytes}`);
  }
  const PAGES = poolBytes / pageBytes;
  const qb = indexBits(N);
  const pb = Math.log2(PAGES);
  const lp = Math.log2(P);
  // Beats of a ULPDU: up to the pool's.
  const bb = Math.log2(poolBytes / W) + 1;
  const vb = MPA_RX_VERDICT.width;
  const m = new ModuleBuilder(
    ulpduReasmName(W, N),
    `ULPDU reassembly for ${N} QPs, ${W} octets per beat: ULPDU beats of the shared mpa_rx, interleaved by TCP segment, in;\n` +
      `whole ULPDUs out, one after another, with MPA's verdict on every beat (a pool of ${PAGES} pages of ${P} beats).`,
    { bytes: W, qps: N, poolBytes },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const s = sinkStream({ bytes: W, id: qb, user: vb }).declare(m, 's_axis', 'AXI4-Stream input: ULPDU beats of mpa_rx, tid = QP, tuser the verdict on tlast (s_axis)', MPA_RX_VERDICT);
  const o = sourceStream({ bytes: W, id: qb, user: vb }).declare(m, 'm_axis', 'AXI4-Stream output: whole ULPDUs, tid = QP, tuser the verdict on every beat (m_axis)', MPA_RX_VERDICT);
  const cg = 'Configuration: a new connection on QP cfg_qp (its open ULPDU is dropped)';
  const cfgValid = m.input('cfg_valid', 1, { group: cg });
  const cfgReady = m.output('cfg_ready', 1, { group: cg, doc: 'cfg_valid is taken: low after rst (the init sweep) and while a drop is under way' });
  const cfgQp = m.input('cfg_qp', qb, { group: cg });
  const cfgRfc7306 = m.input('cfg_rfc7306', 1, { group: cg, doc: "the QP's RFC 7306 setting, given back with each of its ULPDUs (m_rfc7306) for ddp_rx_hdr" });
  const outRfc7306 = m.output('m_rfc7306', 1, { group: 'AXI4-Stream output: whole ULPDUs, tid = QP, tuser the verdict on every beat (m_axis)', doc: "with every m_axis beat: its QP's cfg_rfc7306" });
  const idle = m.output('idle', 1, { group: 'Status', doc: 'no complete ULPDU is held (open ULPDUs wait for their QP\'s next segment)' });

  // ---- storage ----------------------------------------------------------------------------------
  const CTX = record('ulpdu_reasm_ctx', {
    beats: { width: bb, doc: 'beats of the open ULPDU so far (0: none open)' },
    head: { width: pb, doc: 'its first page' },
    page: { width: pb, doc: 'the page its next beat goes to (while beats is not a multiple of the page)' },
    rfc7306: { width: 1, doc: "the connection's cfg_rfc7306" },
  });
  const DESC = record('ulpdu_reasm_desc', {
    qp: qb,
    head: { width: pb, doc: 'first page' },
    beats: { width: bb, doc: 'beats of the ULPDU' },
    keep: { width: W, doc: 'tkeep of its last beat' },
    verdict: MPA_RX_VERDICT,
    drop: { width: 1, doc: 'a partial ULPDU of a restarted QP: its pages go back, nothing leaves' },
    rfc7306: { width: 1, doc: "its QP's cfg_rfc7306" },
  });
  const pool = ram(m, 'pool', { width: 8 * W, depth: PAGES * P, latency: 1, doc: 'the beats of every ULPDU, page by page' });
  const link = ram(m, 'link', { width: pb, depth: PAGES, latency: 1, doc: 'the page after each page of a ULPDU' });
  const ctx = ram(m, 'qp_ctx', { width: CTX.width, depth: Math.max(N, 2), latency: 1, doc: 'the open ULPDU of each QP' });

  // ---- init sweep: clear the contexts, put every page on the free list -----------------------------
  const sweepLen = ulpduReasmInitCycles(W, N, poolBytes);
  const sb = indexBits(sweepLen);
  const init = m.reg('init', 1, { reset: 1, doc: `after rst: contexts cleared and pages freed, one a cycle (${sweepLen} cycles)` });
  const initIdx = m.reg('init_idx', sb, { reset: 0 });
  const initFree = m.let('init_free', init.and(sweepLen === PAGES ? lit(1, 1) : initIdx.lt(lit(sb, PAGES))), { doc: 'the sweep frees page init_idx' });

  // ---- writer --------------------------------------------------------------------------------------
  const IN = record('ulpdu_reasm_in', { data: 8 * W, keep: W, last: 1, qp: qb, verdict: MPA_RX_VERDICT });
  const inReg = pipelineRegister(m, 'in', { valid: s.valid, data: IN.pack({ data: s.data, keep: s.keep!, last: s.last!, qp: s.id!, verdict: s.user! }) }, { skid: true, doc: 'the input beat' });
  m.assign(s.ready, inReg.ready);
  const b = IN.view(inReg.out.data, { m, prefix: 'in_beat' });
  const take = m.wire('in_take', 1, { doc: 'the writer stores the input beat' });
  m.assign(inReg.out.ready, take);

  const cur = m.reg('cur', CTX.width, { doc: 'the context of the QP the writer holds', record: CTX });
  const curQp = m.reg('cur_qp', qb);
  const curValid = m.reg('cur_valid', 1, { reset: 0, doc: 'cur holds cur_qp\'s context (else it is in qp_ctx)' });
  const loading = m.reg('loading', 1, { reset: 0, doc: 'qp_ctx read the context of load_qp last cycle: it is in the RAM\'s read register' });
  const loadQp = m.reg('load_qp', qb);
  const loadDrop = m.reg('load_drop', 1, { doc: 'that switch is for a drop (cfg), not for the input beat' });
  const dropPending = m.reg('drop_pending', 1, { reset: 0, doc: 'a cfg waits: drop the open ULPDU of drop_qp' });
  const dropQp = m.reg('drop_qp', qb);
  const dropRfc7306 = m.reg('drop_rfc7306', 1, { doc: "the new connection's cfg_rfc7306" });
  m.assign(cfgReady, init.not().and(dropPending.not()));
  const cfgTake = m.let('cfg_take', cfgValid.and(init.not()).and(dropPending.not()));

  const eff = CTX.view(mux(loading, ctx.data, cur), { m, prefix: 'eff' });
  const effQp = m.let('eff_qp', mux(loading, loadQp, curQp), { doc: 'the QP whose context is eff' });
  const effOn = m.let('eff_on', loading.or(curValid), { doc: 'eff is a context' });
  // One thing a cycle: a loaded context serves what it was loaded for; otherwise a waiting drop
  // goes first (its QP's context here, or a switch to it), then the input beat (likewise).
  const hitDrop = m.let('hit_drop', curValid.and(dropQp.eq(curQp)), { doc: 'cur is the context of drop_qp' });
  const hitBeat = m.let('hit_beat', curValid.and(b.qp.eq(curQp)), { doc: 'cur is the context of the input beat\'s QP' });
  const dropHere = m.let('drop_here', dropPending.and(mux(loading, loadDrop, hitDrop)), { doc: 'the drop acts on eff this cycle' });
  const beatHere = m.let('beat_here', inReg.out.valid.and(mux(loading, loadDrop.not(), dropPending.not().and(hitBeat))), { doc: 'the input beat is for eff\'s QP (a switch for it loads that one)' });
  const switching = m.let('switching', init.not().and(loading.not()).and(mux(dropPending, hitDrop.not(), inReg.out.valid.and(hitBeat.not()))), { doc: 'write back cur, read the context needed next' });
  const wantQp = m.let('want_qp', mux(dropPending, dropQp, b.qp), { doc: 'the QP whose context the switch reads' });
  const openUlpdu = m.let('eff_open', eff.beats.ne(0), { doc: 'eff has an open ULPDU' });
  const needPage = m.let('need_page', eff.beats.slice(lp - 1, 0).eq(0), { doc: 'the beat starts a page (a new ULPDU, or its last page is full)' });
  const free = m.wire('free_pop', 1);
  const freePush = m.wire('free_push', 1);
  const freePage = m.wire('free_page', pb);
  const freeList = bramFifo(m, 'free', pb, PAGES, { push: freePush, data: freePage, pop: free });
  m.assign(take, beatHere.and(needPage.not().or(freeList.headValid)));
  m.assign(free, take.and(needPage));
  const page = m.let('beat_page', mux(needPage, freeList.head, eff.page), { doc: 'the page the beat goes to' });
  const head = m.let('beat_head', mux(openUlpdu, eff.head, freeList.head), { doc: 'the ULPDU\'s first page' });
  const beats = m.let('beat_count', eff.beats.add(1), { doc: 'beats of the ULPDU with this one' });
  pool.write(take, cat(page, eff.beats.slice(lp - 1, 0)), b.data);
  link.write(take.and(needPage).and(openUlpdu), eff.page, freeList.head);

  const descPush = m.let('desc_push', take.and(b.last).or(dropHere.and(openUlpdu)), { doc: 'a ULPDU is complete (or dropped)' });
  const descIn = mux(
    dropHere,
    DESC.pack({ qp: effQp, head: eff.head, beats: eff.beats, keep: lit(W, 0), verdict: lit(vb, 0), drop: lit(1, 1), rfc7306: eff.rfc7306 }),
    DESC.pack({ qp: effQp, head, beats, keep: b.keep, verdict: b.verdict, drop: lit(1, 0), rfc7306: eff.rfc7306 }),
  );
  const descPop = m.wire('desc_pop', 1);
  // Every queued ULPDU holds a page until it is taken: PAGES descriptors never overflow.
  const descs = bramFifo(m, 'desc', DESC.width, PAGES, { push: descPush, data: descIn, pop: descPop });
  // A drop starts the new connection's context; a ULPDU's last beat closes it (the setting stays).
  const next = mux(
    dropHere,
    CTX.update(CTX.zero(), { rfc7306: dropRfc7306 }),
    mux(take.and(b.last), CTX.update(CTX.zero(), { rfc7306: eff.rfc7306 }), mux(take, CTX.pack({ beats, head, page, rfc7306: eff.rfc7306 }), eff.value)),
  );
  // Write-back: a switch stores cur (if it holds a context); the sweep clears.
  ctx.write(init.or(switching.and(curValid)), mux(init, initIdx.slice(qb - 1, 0), curQp), mux(init, CTX.zero(), cur));
  ctx.read(wantQp, switching);
  m.sync(() => {
    m.set(loading, switching);
    m.when(switching, () => {
      m.set(loadQp, wantQp);
      m.set(loadDrop, dropPending);
      m.set(curValid, 0);
    });
    m.when(effOn.and(switching.not()), () => {
      m.set(cur, next);
      m.set(curQp, effQp);
      m.set(curValid, 1);
    });
    m.when(dropHere, () => m.set(dropPending, 0));
    m.when(cfgTake, () => {
      m.set(dropPending, 1);
      m.set(dropQp, cfgQp);
      m.set(dropRfc7306, cfgRfc7306);
    });
    m.when(init, () => {
      m.set(initIdx, initIdx.add(1));
      m.when(initIdx.eq(lit(sb, sweepLen - 1)), () => m.set(init, 0));
    });
  });

  // ---- reader ----------------------------------------------------------------------------------------
  const rdActive = m.reg('rd_active', 1, { reset: 0, doc: 'a ULPDU is being read' });
  const rd = {
    qp: m.reg('rd_qp', qb),
    page: m.reg('rd_page', pb, { doc: 'the page being read' }),
    off: m.reg('rd_off', lp, { doc: 'the next beat in it' }),
    left: m.reg('rd_left', bb, { doc: 'beats still to read' }),
    one: m.reg('rd_one', 1, { doc: 'rd_left == 1: the next beat is the last' }),
    keep: m.reg('rd_keep', W),
    verdict: m.reg('rd_verdict', vb),
    drop: m.reg('rd_drop', 1),
    rfc7306: m.reg('rd_rfc7306', 1),
  };
  const outValid = m.reg('rd_out_valid', 1, { reset: 0, doc: 'pool_rd_data holds a beat for the output skid buffer' });
  const OUT = record('ulpdu_reasm_out', { qp: qb, keep: W, last: 1, verdict: MPA_RX_VERDICT, rfc7306: 1 });
  const outSide = m.reg('rd_out_side', OUT.width, { doc: 'the tid, tkeep, tlast and verdict of that beat', record: OUT });
  const skid = pipelineRegister(m, 'out_skid', { valid: outValid, data: cat(outSide, pool.data) }, { skid: true, doc: 'the output beat' });
  const room = m.let('rd_room', outValid.not().or(skid.ready), { doc: 'the RAM\'s read register can take the next beat' });
  const issue = m.let('rd_issue', rdActive.and(rd.drop.or(room)), { doc: 'the reader reads (or, dropping, skips) a beat' });
  const lastOfPage = m.let('rd_page_end', rd.one.or(rd.off.eq(lit(lp, P - 1))), { doc: 'the beat is the last the ULPDU has in its page' });
  const finishing = m.let('rd_finishing', issue.and(rd.one));
  m.assign(descPop, descs.headValid.and(rdActive.not().or(finishing)));
  const d = DESC.view(descs.head, { m, prefix: 'next_ulpdu' });
  const dOne = m.let('next_ulpdu_one', d.beats.eq(1), { doc: 'the next ULPDU is one beat' });
  const { qp: dQp, keep: dKeep, verdict: dVerdict, drop: dDrop, rfc7306: dRfc7306 } = d;
  link.read(mux(descPop, d.head, link.data), descPop.or(issue.and(lastOfPage).and(rd.one.not())));
  pool.read(cat(rd.page, rd.off), issue.and(rd.drop.not()));
  m.assign(freePush, initFree.or(issue.and(lastOfPage)));
  m.assign(freePage, mux(init, initIdx.slice(pb - 1, 0), rd.page));
  m.sync(() => {
    m.set(outValid, issue.and(rd.drop.not()).or(outValid.and(skid.ready.not())));
    m.when(issue.and(rd.drop.not()), () => m.set(outSide, OUT.pack({ qp: rd.qp, keep: mux(rd.one, rd.keep, lit(W, (1n << BigInt(W)) - 1n)), last: rd.one, verdict: rd.verdict, rfc7306: rd.rfc7306 })));
    m.when(issue, () => {
      m.set(rd.left, rd.left.sub(1));
      m.set(rd.one, rd.left.eq(2));
      m.set(rd.off, rd.off.add(1));
      m.when(lastOfPage, () => {
        m.set(rd.page, link.data);
        m.set(rd.off, 0);
      });
    });
    m.when(finishing, () => m.set(rdActive, 0));
    m.when(descPop, () => {
      m.set(rdActive, 1);
      m.set(rd.qp, dQp);
      m.set(rd.page, d.head);
      m.set(rd.off, 0);
      m.set(rd.left, d.beats);
      m.set(rd.one, dOne);
      m.set(rd.keep, dKeep);
      m.set(rd.verdict, dVerdict);
      m.set(rd.drop, dDrop);
      m.set(rd.rfc7306, dRfc7306);
    });
  });
  const out = OUT.view(skid.out.data.slice(OUT.width + 8 * W - 1, 8 * W), { m, prefix: 'out' });
  m.assign(o.valid, skid.out.valid);
  m.assign(o.data, skid.out.data.slice(8 * W - 1, 0));
  m.assign(o.keep!, out.keep);
  m.assign(o.last!, out.last);
  m.assign(o.id!, out.qp);
  m.assign(o.user!, out.verdict);
  m.assign(outRfc7306, out.rfc7306);
  m.assign(skid.out.ready, o.ready);
  m.assign(idle, descs.empty.and(rdActive.not()).and(outValid.not()).and(skid.out.valid.not()));
  return m.build();
}
