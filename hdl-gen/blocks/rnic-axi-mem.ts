import { type Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { bramFifo } from '../lib/fifo-bram';
import { fifo } from '../lib/fifo';
import { enumConstants } from '../lib/ports';
import { ram } from '../lib/ram';
import { pipelineRegister } from '../lib/stage';
import { record } from '../lib/record';
import {
  AXI_ADDR_BITS, AXI_BOUNDARY, AXI_BURST_INCR, AXI_CACHE, AXI_LEN_BITS, AXI_MAX_BURST, AXI_MEM_ERROR, AXI_PROT, AXI_RESP, burstCollector,
} from './axi-burst';
import { checkRnicWidth } from './rnic-widths';

/**
 * rnic_axi_mem_w<W>: the host-memory ports of rnic_top (mem_wr_*, mem_rd_*; W-octet beats at
 * W-aligned addresses, one at a time) as an AXI4 master (m_axi_*, 8·W data bits, 64 address bits),
 * in the conventions of verilog-axi's axi_dma (AxCACHE 0011, AxPROT 010, AxLOCK 0, INCR bursts of
 * AxSIZE = log2 W).
 *
 * Bursts. Beats at consecutive addresses (a message's data) are coalesced into INCR bursts of up
 * to `maxBurst` beats that never cross a 4 KiB boundary (AXI4 A3.4.1); a burst also goes out
 * `wait` cycles after its last beat when no next one has come (axi-burst.ts).
 *
 * Writes: every beat is taken into a write-data FIFO with its strobes, passed through unchanged
 * (WSTRB = mem_wr_strb, sparse strobes included). A burst, once complete, is queued for AW and
 * for W; its beats go into the W register once its AW is on the bus (W never runs ahead of an
 * offered burst, and never waits for AWREADY, A3.3.1). Every write carries AWID 0, so B comes back
 * in order; BREADY is always 1.
 * `writeSlots` bursts may be open or unanswered at once (each holds a slot from its first beat to
 * its B); mem_wr_ready is low while all slots are in use or the FIFO is full.
 *
 * Reads: requests are coalesced the same way, queued, and each burst is issued on AR (a skid
 * buffer) with an ID of its own, taken in turn from a pool of `readIds` (bursts leave in issue
 * order, so an AR waits only while all the IDs are in flight). Read data goes into a reorder buffer of `readBuffer` beats (block RAM): a burst is given
 * its place there when its AR is issued, and an AR waits until the buffer has room for all its
 * beats (credits), so RREADY is always 1 and nothing the slave sends is ever refused. R beats of
 * different IDs may come in any order, interleaved; each is written at its ID's next place.
 * mem_rd_data_valid / mem_rd_data give the beats in request order, one per cycle, from the head of
 * the buffer as soon as they are there: the top's "always accepted" read data never overflows.
 *
 * Order. A read sees every write taken before it (in an earlier cycle): a read burst is queued
 * with the write slots holding a burst of its 4 KiB page, and its AR waits until they are answered
 * on B (AXI orders nothing between reads
 * and writes; B is the point where a write is visible). Writes are not held behind earlier reads:
 * a write taken after a read of the same address may reach memory first. rnic_top never needs that
 * order (its atomic write-back follows its read's data; RDMAP leaves a buffer written while it is
 * read undefined). `wr_beats` / `wr_beats_done` count the write beats taken and answered, so a
 * wrapper can hold a completion until the data before it is in memory (rnic-top-axi-mem.ts).
 *
 * Errors. A BRESP or RRESP other than OKAY (SLVERR, DECERR; an EXOKAY, never asked for, counts as
 * SLVERR) sets err_valid (sticky until rst) with err_code the first error's code (verilog-axi
 * axi_dma's DMA_ERROR_AXI_*: 4/5 read SLVERR/DECERR, 6/7 write) and counts in err_count (a
 * saturating count of failed B responses and R beats). The datapath has no memory-error path: a
 * failed write is reported to rnic_top as written, and a failed read's data (whatever the slave
 * sent) goes to the top as read. The host must treat err_valid as fatal for the RNIC (reset it).
 *
 * Status: wr_idle is 1 when no write is open or unanswered; idle when nothing at all is in flight.
 */

export interface AxiMemOptions {
  /** Longest burst in beats (AxLEN + 1): a power of two, 1..256, at most 4096 / W (default 16). */
  readonly maxBurst?: number;
  /** Cycles a burst waits for its next beat before it goes out (default 4). */
  readonly wait?: number;
  /** Write bursts open or awaiting B at once (a power of two ≥ 2, default 8). */
  readonly writeSlots?: number;
  /** Write-data FIFO in beats (a power of two ≥ 2·maxBurst, default 4·maxBurst). */
  readonly writeFifo?: number;
  /** Read IDs, one per burst in flight (a power of two ≥ 2, default 16): ARID has log2 of it bits. */
  readonly readIds?: number;
  /** Reorder buffer in beats (a power of two ≥ 2·maxBurst, default 256): the bound on read beats in flight. */
  readonly readBuffer?: number;
  /** Read bursts queued between coalescing and AR (a power of two ≥ 4, default 8). */
  readonly readQueue?: number;
}

export const AXI_MEM_DEFAULTS = Object.freeze({ maxBurst: 16, wait: 4, writeSlots: 8, readIds: 16, readBuffer: 256, readQueue: 8 });

/** The options with their defaults filled in, checked. */
export function axiMemParams(bytes: number, o: AxiMemOptions = {}): Required<AxiMemOptions> {
  const p = { ...AXI_MEM_DEFAULTS, writeFifo: 4 * (o.maxBurst ?? AXI_MEM_DEFAULTS.maxBurst), ...o };
  const pow2 = (n: number) => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
  const need = (ok: boolean, what: string) => {
    if (!ok) throw new RangeError(`rnic_axi_mem_w${bytes}: ${what}`);
  };
  need(pow2(p.maxBurst) && p.maxBurst <= Math.min(AXI_MAX_BURST, AXI_BOUNDARY / bytes), `maxBurst must be a power of two of at most ${Math.min(AXI_MAX_BURST, AXI_BOUNDARY / bytes)}, got ${p.maxBurst}`);
  need(Number.isInteger(p.wait) && p.wait >= 1 && p.wait <= 64, `wait must be 1..64 cycles, got ${p.wait}`);
  need(pow2(p.writeSlots) && p.writeSlots >= 2, `writeSlots must be a power of two >= 2, got ${p.writeSlots}`);
  need(pow2(p.writeFifo) && p.writeFifo >= 2 * p.maxBurst, `writeFifo must be a power of two >= 2 * maxBurst, got ${p.writeFifo}`);
  need(pow2(p.readIds) && p.readIds >= 2 && p.readIds <= 256, `readIds must be a power of two in 2..256, got ${p.readIds}`);
  need(pow2(p.readBuffer) && p.readBuffer >= 2 * p.maxBurst, `readBuffer must be a power of two >= 2 * maxBurst, got ${p.readBuffer}`);
  need(pow2(p.readQueue) && p.readQueue >= 4, `readQueue must be a power of two >= 4, got ${p.readQueue}`);
  return p;
}

/** The option each name tag stands for: `_b16` is maxBurst 16, … */
const NAME_TAGS: readonly (readonly [keyof AxiMemOptions, string])[] = [['maxBurst', 'b'], ['wait', 't'], ['writeSlots', 's'], ['writeFifo', 'f'], ['readIds', 'i'], ['readBuffer', 'r'], ['readQueue', 'q']];

/** rnic_axi_mem_w<W>, with the non-default options in the name (`_b<maxBurst>_t<wait>_s<slots>…`). */
export function axiMemName(bytes: number, o: AxiMemOptions = {}): string {
  const p = axiMemParams(bytes, o);
  const d = axiMemParams(bytes, {});
  return `rnic_axi_mem_w${bytes}` + NAME_TAGS.filter(([k]) => p[k] !== d[k]).map(([k, t]) => `_${t}${p[k]}`).join('');
}

/** The options a name's tags give (`_b4_r32` → maxBurst 4, readBuffer 32): the inverse of axiMemName. */
export function axiMemOptionsOf(tags: string): AxiMemOptions {
  const o: Record<string, number> = {};
  for (const [, t, v] of tags.matchAll(/_([a-z])(\d+)/g)) {
    const k = NAME_TAGS.find(([, x]) => x === t)?.[0];
    if (!k) throw new Error(`rnic_axi_mem: no option tag '${t}' (tags: ${NAME_TAGS.map(([n, x]) => `${x} ${n}`).join(', ')})`);
    o[k] = Number(v);
  }
  return o;
}

/** Bits of the write-beat counts (wr_beats, wr_beats_done): far more than can be in flight. */
export const WR_COUNT_BITS = 16;

/** Bits of an index into n entries (n a power of two ≥ 2). */
const bitsOf = (n: number) => Math.log2(n);

/** `e` as `w` bits: zero-extended, or its low bits (the caller knows the value fits). */
const fit = (e: Expr, w: number): Expr => (e.width >= w ? e.slice(w - 1, 0) : e.zext(w));

/** `xs[idx]` as a mux tree on the index bits (LUT6 and MUXF7/F8 on Xilinx: one LUT level for 16). */
function pick(idx: Expr, xs: readonly Expr[]): Expr {
  const tree = (bit: number, ys: readonly Expr[]): Expr => (ys.length === 1 ? ys[0]! : tree(bit + 1, ys.flatMap((_, i) => (i % 2 ? [] : [mux(idx.bit(bit), ys[i + 1]!, ys[i]!)]))));
  if (xs.length !== 1 << idx.width) throw new Error(`pick: ${xs.length} values for a ${idx.width}-bit index`);
  return tree(0, xs);
}

/** One bit per entry: bit i is `idx == i` (the one-hot decode of idx). */
const decode = (idx: Expr, n: number): Expr => cat(...Array.from({ length: n }, (_, i) => idx.eq(n - 1 - i)));

export function rnicAxiMemModule(bytes: number, opts: AxiMemOptions = {}): Module {
  checkRnicWidth('rnic_axi_mem', bytes);
  const W = bytes;
  const p = axiMemParams(W, opts);
  const DW = 8 * W;
  const AW = AXI_ADDR_BITS;
  const PB = Math.log2(AXI_BOUNDARY);
  const S = p.writeSlots;
  const sb = bitsOf(S);
  const I = p.readIds;
  const ib = bitsOf(I);
  const D = p.readBuffer;
  const rb = bitsOf(D);
  const m = new ModuleBuilder(
    axiMemName(W, opts),
    `rnic_top's host-memory ports (mem_wr_*, mem_rd_*; ${W}-octet beats) as an AXI4 master (m_axi_*, ${DW}-bit data):\n` +
      `consecutive beats coalesced into INCR bursts of up to ${p.maxBurst} beats, never across 4 KiB, out ${p.wait} cycles\n` +
      `after their last beat at the latest; write strobes passed through; writes on ID 0 (${S} bursts open or\n` +
      `awaiting B); reads on ${I} IDs in turn, answers in any order put back in request order by a\n` +
      `${D}-beat reorder buffer that each AR reserves room in first (RREADY always 1). A read waits at AR\n` +
      'while a write to its 4 KiB page is not answered. BRESP/RRESP errors: err_valid, err_code, err_count\n' +
      '(the datapath itself carries on: it has no memory-error path).',
    { bytes: W, maxBurst: p.maxBurst, wait: p.wait, writeSlots: S, writeFifo: p.writeFifo, readIds: I, readBuffer: D, readQueue: p.readQueue },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  // ---- ports ------------------------------------------------------------------------------------
  const wg = "Host memory write, from rnic_top's mem_wr_* (W-aligned beats with strobes)";
  const wrAddr = m.input('mem_wr_addr', AW, { group: wg, doc: 'a multiple of W' });
  const wrData = m.input('mem_wr_data', DW, { group: wg, doc: 'lane j = octet at mem_wr_addr + j' });
  const wrStrb = m.input('mem_wr_strb', W, { group: wg });
  const wrValid = m.input('mem_wr_valid', 1, { group: wg });
  const wrReady = m.output('mem_wr_ready', 1, { group: wg, doc: 'a write slot is free and the write-data FIFO has room (flip-flops)' });
  const rg = "Host memory read, from rnic_top's mem_rd_* (W-aligned beats; data in order, always accepted)";
  const rdAddr = m.input('mem_rd_addr', AW, { group: rg, doc: 'a multiple of W' });
  const rdValid = m.input('mem_rd_valid', 1, { group: rg });
  const rdReady = m.output('mem_rd_ready', 1, { group: rg, doc: 'the read queue has room' });
  const rdDataValid = m.output('mem_rd_data_valid', 1, { group: rg, doc: 'in request order, at least 2 cycles after the request; never held' });
  const rdData = m.output('mem_rd_data', DW, { group: rg });

  const awg = 'AXI4 master: write address (m_axi_aw*)';
  const awid = m.output('m_axi_awid', ib, { group: awg, doc: 'always 0: B comes back in order' });
  const awaddr = m.output('m_axi_awaddr', AW, { group: awg });
  const awlen = m.output('m_axi_awlen', AXI_LEN_BITS, { group: awg, doc: `beats - 1, at most ${p.maxBurst - 1}` });
  const awsize = m.output('m_axi_awsize', 3, { group: awg, doc: `log2 of ${W} octets per beat` });
  const awburst = m.output('m_axi_awburst', 2, { group: awg, doc: 'INCR' });
  const awlock = m.output('m_axi_awlock', 1, { group: awg });
  const awcache = m.output('m_axi_awcache', 4, { group: awg });
  const awprot = m.output('m_axi_awprot', 3, { group: awg });
  const awvalid = m.output('m_axi_awvalid', 1, { group: awg });
  const awready = m.input('m_axi_awready', 1, { group: awg });
  const wdg = 'AXI4 master: write data (m_axi_w*)';
  const wdata = m.output('m_axi_wdata', DW, { group: wdg });
  const wstrb = m.output('m_axi_wstrb', W, { group: wdg, doc: 'mem_wr_strb of the beat' });
  const wlast = m.output('m_axi_wlast', 1, { group: wdg });
  const wvalid = m.output('m_axi_wvalid', 1, { group: wdg });
  const wready = m.input('m_axi_wready', 1, { group: wdg });
  const bg = 'AXI4 master: write response (m_axi_b*)';
  const bid = m.input('m_axi_bid', ib, { group: bg });
  const bresp = m.input('m_axi_bresp', 2, { group: bg });
  const bvalid = m.input('m_axi_bvalid', 1, { group: bg });
  const bready = m.output('m_axi_bready', 1, { group: bg, doc: 'always 1' });
  const arg = 'AXI4 master: read address (m_axi_ar*)';
  const arid = m.output('m_axi_arid', ib, { group: arg, doc: 'one per burst in flight, in turn' });
  const araddr = m.output('m_axi_araddr', AW, { group: arg });
  const arlen = m.output('m_axi_arlen', AXI_LEN_BITS, { group: arg, doc: `beats - 1, at most ${p.maxBurst - 1}` });
  const arsize = m.output('m_axi_arsize', 3, { group: arg });
  const arburst = m.output('m_axi_arburst', 2, { group: arg, doc: 'INCR' });
  const arlock = m.output('m_axi_arlock', 1, { group: arg });
  const arcache = m.output('m_axi_arcache', 4, { group: arg });
  const arprot = m.output('m_axi_arprot', 3, { group: arg });
  const arvalid = m.output('m_axi_arvalid', 1, { group: arg });
  const arready = m.input('m_axi_arready', 1, { group: arg });
  const rdg = 'AXI4 master: read data (m_axi_r*)';
  const rid = m.input('m_axi_rid', ib, { group: rdg });
  const rdataIn = m.input('m_axi_rdata', DW, { group: rdg });
  const rresp = m.input('m_axi_rresp', 2, { group: rdg });
  const rlast = m.input('m_axi_rlast', 1, { group: rdg });
  const rvalid = m.input('m_axi_rvalid', 1, { group: rdg });
  const rready = m.output('m_axi_rready', 1, { group: rdg, doc: 'always 1: every beat has its place reserved' });
  const sg = 'Status';
  const idleOut = m.output('idle', 1, { group: sg, doc: 'no read or write in flight' });
  const wrIdleOut = m.output('wr_idle', 1, { group: sg, doc: 'every write taken is answered on B' });
  const wrBeatsOut = m.output('wr_beats', WR_COUNT_BITS, { group: sg, doc: 'write beats taken, mod 2^16' });
  const wrDoneOut = m.output('wr_beats_done', WR_COUNT_BITS, { group: sg, doc: 'write beats answered on B, mod 2^16' });
  const eg = 'Errors (sticky until rst)';
  const errValidOut = m.output('err_valid', 1, { group: eg, doc: 'a BRESP or RRESP was not OKAY' });
  const errCodeOut = m.output('err_code', 4, { group: eg, doc: 'the first one: 4/5 read SLVERR/DECERR, 6/7 write (axi_dma codes)' });
  const errCountOut = m.output('err_count', 16, { group: eg, doc: 'failed B responses and R beats, saturating' });

  const K = {
    burst: m.constant('AXI_BURST_INCR', 2, AXI_BURST_INCR, 'AxBURST INCR'),
    size: m.constant('AXI_SIZE', 3, Math.log2(W), `AxSIZE: ${W} octets per beat`),
    cache: m.constant('AXI_CACHE', 4, AXI_CACHE, 'AxCACHE: normal non-cacheable bufferable'),
    prot: m.constant('AXI_PROT', 3, AXI_PROT, 'AxPROT: unprivileged, non-secure, data'),
    writeId: m.constant('AXI_WRITE_ID', ib, 0, 'every write burst: B in issue order'),
  };
  const RESP = enumConstants(m, 'AXI_RESP', 2, AXI_RESP);
  const ERR = enumConstants(m, 'ERR', 4, AXI_MEM_ERROR);
  for (const [port, value] of [[awsize, K.size], [awburst, K.burst], [awcache, K.cache], [awprot, K.prot], [arsize, K.size], [arburst, K.burst], [arcache, K.cache], [arprot, K.prot]] as const) {
    m.assign(port, value);
  }
  m.assign(awlock, 0);
  m.assign(arlock, 0);
  m.assign(awid, K.writeId);
  m.assign(bready, 1);
  m.assign(rready, 1);
  m.allowUnused(bid, 'every write is on ID 0');
  m.allowUnused(rlast, "a burst's beats are counted against the length it was issued with");
  m.allowUnused(wrAddr, 'a multiple of W: its low bits are 0');
  m.allowUnused(rdAddr, 'a multiple of W: its low bits are 0');
  const pageOf = (a: Expr) => a.slice(AW - 1, PB);

  // ---- writes: collect, slot, AW, W, B -----------------------------------------------------------
  // Slots: a ring of S, one per burst from its first beat to its B (in order: one write ID). Slot
  // i's page, for the read-after-write check, and whether it is held.
  const wAlloc = m.reg('wr_alloc_ptr', sb + 1, { reset: 0, doc: 'write bursts opened (the next slot, with a wrap bit)' });
  const wFree = m.reg('wr_free_ptr', sb + 1, { reset: 0, doc: 'write bursts answered on B' });
  const dataFifoDone = m.wire('wr_fifo_pop', 1, { doc: 'the head beat goes into the W register' });
  const wFire = m.let('wr_fire', wrValid.and(wrReady), { doc: 'a write beat is taken from rnic_top' });
  const WR_BEAT = record('axi_wr_beat', { data: DW, strb: W });
  const wfifo = bramFifo(m, 'wr_fifo', WR_BEAT.width, p.writeFifo, { push: wFire, data: WR_BEAT.pack({ data: wrData, strb: wrStrb }), pop: dataFifoDone });
  const wc = burstCollector(m, 'wr_burst', { bytes: W, fire: wFire, held: wrValid.and(wrReady.not()), addr: wrAddr, maxBurst: p.maxBurst, wait: p.wait });
  const opening = m.let('wr_slot_take', wc.opening, { doc: 'the beat in the collector starts a write burst: it takes a slot' });
  // mem_wr_ready from flip-flops: a slot is left for every burst there may be, counting the open
  // one, the beat on its way to the collector (it may open one) and the beat taken this cycle.
  const slotRoom = m.reg('wr_slot_room', 1, { reset: 0, doc: 'a beat taken now cannot need a slot beyond the S' });
  m.assign(wrReady, wfifo.full.not().and(slotRoom));
  const slotPage = Array.from({ length: S }, (_, i) => m.reg(`wr_slot_page_${i}`, AW - PB, { doc: `the page of the write burst in slot ${i}` }));
  const slotHeld = m.reg('wr_slot_held', S, { reset: 0, doc: 'slot i holds a write burst (open or awaiting B)' });
  const bFire = m.let('wr_b_fire', bvalid, { doc: 'a write burst is answered (BREADY is 1)' });
  const allocIdx = wAlloc.slice(sb - 1, 0);
  const freeIdx = wFree.slice(sb - 1, 0);
  const slotClear = m.let('wr_slot_clear', mux(bFire, decode(freeIdx, S), lit(S, 0)), { doc: 'the slot answered on B this cycle' });
  m.sync(() => {
    m.when(opening, () => m.set(wAlloc, wAlloc.add(1)));
    m.when(bFire, () => m.set(wFree, wFree.add(1)));
    const set = mux(opening, decode(allocIdx, S), lit(S, 0));
    m.set(slotHeld, slotHeld.and(slotClear.not()).or(set));
    slotPage.forEach((pg, i) => m.when(opening.and(allocIdx.eq(i)), () => m.set(pg, wc.beatPage)));
    const usedNext = wAlloc.add(opening.zext(sb + 1)).sub(wFree).sub(bFire.zext(sb + 1)).zext(sb + 2);
    m.set(slotRoom, usedNext.add(wFire.zext(sb + 2)).lt(S));
  });

  // A complete burst is queued for AW and for W (both at most S: a slot each).
  const BURST = record('axi_burst', { addr: AW, len: AXI_LEN_BITS });
  const awLoad = m.wire('aw_load', 1, { doc: 'the AW register takes the next burst' });
  const awq = fifo(m, 'aw_q', BURST.width, S, { push: wc.closeValid, data: BURST.pack({ addr: wc.closeAddr, len: wc.closeLen }), pop: awLoad });
  const wLastFire = m.wire('w_last_load', 1, { doc: "a burst's last beat goes to the W register" });
  const wlq = fifo(m, 'w_len_q', AXI_LEN_BITS, S, { push: wc.closeValid, data: wc.closeLen, pop: wLastFire });
  const awValidReg = m.reg('aw_valid', 1, { reset: 0 });
  const awAddrReg = m.reg('aw_addr', AW);
  const awLenReg = m.reg('aw_len', AXI_LEN_BITS);
  m.assign(awLoad, awq.empty.not().and(awValidReg.not().or(awready)));
  const awHead = BURST.view(awq.head, { m, prefix: 'aw_q_head' });
  const [awHeadAddr, awHeadLen] = [awHead.addr, awHead.len];
  m.sync(() => {
    m.when(awLoad, () => {
      m.set(awValidReg, 1);
      m.set(awAddrReg, awHeadAddr);
      m.set(awLenReg, awHeadLen);
    }, () => m.when(awready, () => m.set(awValidReg, 0)));
  });
  m.assign(awvalid, awValidReg);
  m.assign(awaddr, awAddrReg);
  m.assign(awlen, awLenReg);
  // W: an output register, loaded from the FIFO's head with the beats of bursts whose AW is on the
  // bus already (w_credit counts the AW register's loads), so a W beat never leads its AW.
  const wCredit = m.reg('w_credit', sb + 1, { reset: 0, doc: 'bursts loaded on AW whose W beats are not all loaded on W' });
  const wBeat = m.reg('w_beat', AXI_LEN_BITS, { reset: 0, doc: 'beats of the current burst loaded on W' });
  const wOutValid = m.reg('w_out_valid', 1, { reset: 0 });
  const wOutData = m.reg('w_out_data', DW);
  const wOutStrb = m.reg('w_out_strb', W);
  const wOutLast = m.reg('w_out_last', 1);
  const head = WR_BEAT.view(wfifo.head, { m, prefix: 'wr_fifo_head' });
  const [headData, headStrb] = [head.data, head.strb];
  const wLoad = m.let('w_load', wfifo.headValid.and(wCredit.ne(0)).and(wOutValid.not().or(wready)), { doc: 'the W register takes the next beat' });
  const wLast = m.let('w_last', wBeat.eq(wlq.head), { doc: "the head beat is its burst's last" });
  m.assign(dataFifoDone, wLoad);
  m.assign(wLastFire, wLoad.and(wLast));
  m.assign(wvalid, wOutValid);
  m.assign(wlast, wOutLast);
  m.assign(wdata, wOutData);
  m.assign(wstrb, wOutStrb);
  m.sync(() => {
    m.set(wCredit, wCredit.add(awLoad.zext(sb + 1)).sub(wLastFire.zext(sb + 1)));
    m.when(wLoad, () => {
      m.set(wBeat, mux(wLast, lit(AXI_LEN_BITS, 0), wBeat.add(1)));
      m.set(wOutValid, 1);
      m.set(wOutData, headData);
      m.set(wOutStrb, headStrb);
      m.set(wOutLast, wLast);
    }, () => m.when(wready, () => m.set(wOutValid, 0)));
  });
  // Beats taken and answered: B answers its burst's beats (the lengths in slot order).
  const bLen = fifo(m, 'b_len_q', AXI_LEN_BITS, S, { push: wc.closeValid, data: wc.closeLen, pop: bFire });
  const beatsTaken = m.reg('wr_beats_taken', WR_COUNT_BITS, { reset: 0 });
  const beatsDone = m.reg('wr_beats_answered', WR_COUNT_BITS, { reset: 0 });
  m.sync(() => {
    m.when(wFire, () => m.set(beatsTaken, beatsTaken.add(1)));
    m.when(bFire, () => m.set(beatsDone, beatsDone.add(fit(bLen.head, WR_COUNT_BITS)).add(1)));
  });
  m.assign(wrBeatsOut, beatsTaken);
  m.assign(wrDoneOut, beatsDone);
  const wrIdle = m.let('wr_idle_all', beatsTaken.eq(beatsDone), { doc: 'every write beat taken is answered on B' });
  m.assign(wrIdleOut, wrIdle);

  // ---- reads: collect, queue, AR (ID, credits, order against writes), R into the reorder buffer ----
  const Q = p.readQueue;
  const candTake = m.wire('rd_cand_load', 1, { doc: 'the candidate register takes the next queued burst' });
  const rFireIn = m.let('rd_fire', rdValid.and(rdReady), { doc: 'a read is taken from rnic_top' });
  const rc = burstCollector(m, 'rd_burst', { bytes: W, fire: rFireIn, held: rdValid.and(rdReady.not()), addr: rdAddr, maxBurst: p.maxBurst, wait: p.wait });
  // Read after write: each burst is queued with the write slots that hold a burst of its page (all
  // the writes taken before its reads are in them by then); it waits at AR until those are answered.
  const RD_BURST = record('axi_rd_burst', { addr: AW, len: AXI_LEN_BITS, match: S });
  const closeMatch = m.let('rd_burst_match', cat(...slotPage.map((pg, i) => slotHeld.bit(i).and(pg.eq(pageOf(rc.closeAddr)))).reverse()), {
    doc: "the write slots holding a burst of the closing read burst's page",
  });
  const arq = fifo(m, 'ar_q', RD_BURST.width, Q, { push: rc.closeValid, data: RD_BURST.pack({ addr: rc.closeAddr, len: rc.closeLen, match: closeMatch }), pop: candTake });
  // Bursts queued, open, or to come of the beat on its way to the collector never pass Q: a beat is
  // taken while three places are left (mem_rd_ready from a flip-flop).
  const rdRoom = m.reg('rd_room', 1, { reset: 0, doc: 'the read queue has room for what a beat taken now may add' });
  const arqCount = arq.count;
  const arqNext = arqCount.add(rc.closeValid.zext(arqCount.width)).sub(candTake.zext(arqCount.width));
  m.sync(() => m.set(rdRoom, arqNext.lt(Q - 2)));
  m.assign(rdReady, rdRoom);
  const candValid = m.reg('rd_cand_valid', 1, { reset: 0, doc: 'a read burst waits to be issued on AR' });
  const candAddr = m.reg('rd_cand_addr', AW);
  const candLen = m.reg('rd_cand_len', AXI_LEN_BITS);
  // A slot answered since clears (one freed and taken again since counts on: a wait, not an error).
  const candMatch = m.reg('rd_cand_match', S, { reset: 0, doc: "write slot i held a burst of the candidate's page when it was queued, and still holds one" });
  const hazard = m.let('rd_hazard', candMatch.any(), { doc: "a write to the candidate's 4 KiB page is open or awaiting B" });
  const turn = m.reg('rd_turn', ib, { reset: 0, doc: 'the read ID the next burst takes' });
  // Bursts leave the reorder buffer in issue order, so the IDs in flight are the `inFlight` before
  // the turn's: the turn's ID is free unless all are.
  const inFlight = m.reg('rd_bursts', ib + 1, { reset: 0, doc: 'read bursts issued and not yet all given to rnic_top' });
  const idFree = m.let('rd_id_free', inFlight.ne(I), { doc: "the turn's ID is not in flight" });
  const freeBits = rb + 1;
  const rdbFree = m.reg('rdb_free', freeBits, { reset: D, doc: 'reorder-buffer places not reserved by an issued burst' });
  const cw = Math.max(freeBits, AXI_LEN_BITS);
  const credit = m.let('rd_credit', fit(rdbFree, cw).gt(fit(candLen, cw)), { doc: "the reorder buffer has room for every beat of the candidate" });
  // AR: a skid buffer (verilog-axis axis_register, REG_TYPE 2), so ARREADY reaches no decision.
  const AR = record('axi_ar', { addr: AW, len: AXI_LEN_BITS, id: ib });
  const ready = m.let('rd_can_issue', candValid.and(hazard.not()).and(idFree).and(credit), { doc: 'the candidate may go out: no write to wait for, its ID free, room for its data' });
  const arOut = pipelineRegister(m, 'ar_out', { valid: ready, data: AR.pack({ addr: candAddr, len: candLen, id: turn }) }, { skid: true, doc: 'the AR channel' });
  const issue = m.let('rd_issue', ready.and(arOut.ready), { doc: 'the candidate goes to AR' });
  m.assign(candTake, arq.empty.not().and(candValid.not().or(issue)));
  const arHead = RD_BURST.view(arq.head, { m, prefix: 'ar_q_head' });
  const [arHeadAddr, arHeadLen, arHeadMatch] = [arHead.addr, arHead.len, arHead.match];
  m.sync(() => {
    m.set(candMatch, mux(candTake, arHeadMatch.and(slotHeld), candMatch).and(slotClear.not()));
    m.when(candTake, () => {
      m.set(candValid, 1);
      m.set(candAddr, arHeadAddr);
      m.set(candLen, arHeadLen);
    }, () => m.when(issue, () => m.set(candValid, 0)));
    m.when(issue, () => m.set(turn, turn.add(1)));
  });
  const arData = AR.view(arOut.out.data, { m, prefix: 'ar_out' });
  m.assign(arvalid, arOut.out.valid);
  m.assign(araddr, arData.addr);
  m.assign(arlen, arData.len);
  m.assign(arid, arData.id);
  m.assign(arOut.out.ready, arready);

  // The reorder buffer: bursts take consecutive places in issue order (rdb_alloc); each ID keeps the
  // place of its next beat (rd_id_next_<i>). The drain gives the places in order, each once its
  // beat is in: the head burst's ID has gone past it. An ID is free again when its burst is given.
  const rdb = ram(m, 'rdb', { width: DW, depth: D, latency: 1, doc: 'reorder buffer' });
  const alloc = m.reg('rdb_alloc', rb, { reset: 0, doc: "the place of the next issued burst's first beat" });
  const lenPlaces = fit(candLen, rb);
  const idNext = Array.from({ length: I }, (_, i) => m.reg(`rd_id_next_${i}`, rb, { doc: `the place of the next beat of ID ${i}` }));
  const rValidReg = m.reg('r_valid', 1, { reset: 0, doc: 'an R beat, registered' });
  const rIdReg = m.reg('r_id', ib);
  const rDataReg = m.reg('r_data', DW);
  const rRespReg = m.reg('r_resp', 2);
  m.sync(() => {
    m.set(rValidReg, rvalid);
    m.when(rvalid, () => {
      m.set(rIdReg, rid);
      m.set(rDataReg, rdataIn);
      m.set(rRespReg, rresp);
    });
  });
  const rPlace = m.let('r_place', pick(rIdReg, idNext), { doc: "where the registered R beat goes: its ID's next place" });
  rdb.write(rValidReg, rPlace, rDataReg);
  const rPlaceNext = m.let('r_place_next', rPlace.add(1));
  // The bursts in issue order, each its ID and the place of its last beat.
  const DRAIN = record('axi_rd_drain', { id: ib, end: rb });
  const drainHeadTake = m.wire('drain_load', 1, { doc: 'the drain takes the next issued burst' });
  const idq = fifo(m, 'drain_q', DRAIN.width, I, { push: issue, data: DRAIN.pack({ id: turn, end: alloc.add(lenPlaces) }), pop: drainHeadTake });
  const dhValid = m.reg('drain_valid', 1, { reset: 0, doc: 'the drain has a burst' });
  const dhId = m.reg('drain_id', ib);
  const dhEnd = m.reg('drain_end', rb);
  const dPtr = m.reg('drain_ptr', rb, { reset: 0, doc: 'the next place given to rnic_top' });
  // Every ID's compare at once, then the head's picked: the wide mux is not in front of a compare.
  const past = m.let('drain_past', cat(...idNext.map((n) => n.ne(dPtr)).reverse()), { doc: "ID i's next place is not drain_ptr" });
  const avail = m.let('drain_avail', dhValid.and(pick(dhId, Array.from({ length: I }, (_, i) => past.bit(i)))), { doc: "the beat at drain_ptr is in the buffer (its ID's next place is past it)" });
  const dhDone = m.let('drain_done', avail.and(dPtr.eq(dhEnd)), { doc: "the drain gives the burst's last beat" });
  m.assign(drainHeadTake, idq.empty.not().and(dhValid.not().or(dhDone)));
  const idqHead = DRAIN.view(idq.head, { m, prefix: 'drain_q_head' });
  const [idqHeadId, idqHeadEnd] = [idqHead.id, idqHead.end];
  rdb.read(dPtr, avail);
  const outValid = m.reg('rd_out_valid', 1, { reset: 0, doc: 'mem_rd_data holds a beat this cycle' });
  m.sync(() => {
    m.set(outValid, avail);
    m.when(avail, () => m.set(dPtr, dPtr.add(1)));
    m.when(drainHeadTake, () => {
      m.set(dhValid, 1);
      m.set(dhId, idqHeadId);
      m.set(dhEnd, idqHeadEnd);
    }, () => m.when(dhDone, () => m.set(dhValid, 0)));
    m.when(issue, () => m.set(alloc, alloc.add(lenPlaces).add(1)));
    const used = mux(issue, fit(candLen, freeBits).add(1), lit(freeBits, 0));
    m.set(rdbFree, rdbFree.sub(used).add(avail.zext(freeBits)));
    m.set(inFlight, inFlight.add(issue.zext(ib + 1)).sub(dhDone.zext(ib + 1)));
    // An issued ID starts at the burst's first place; otherwise it moves past each beat it gets.
    idNext.forEach((n, i) =>
      m.when(issue.and(turn.eq(i)), () => m.set(n, alloc), () => m.when(rValidReg.and(rIdReg.eq(i)), () => m.set(n, rPlaceNext))),
    );
  });
  m.assign(rdDataValid, outValid);
  m.assign(rdData, rdb.data);
  const rdIdle = m.let('rd_idle_all', rc.open.not().and(rc.pending.not()).and(arq.empty).and(candValid.not()).and(arOut.out.valid.not()).and(rdbFree.eq(D)).and(outValid.not()), {
    doc: 'no read taken and not yet given back',
  });
  m.assign(idleOut, rdIdle.and(wrIdle));

  // ---- errors ---------------------------------------------------------------------------------------
  const bErr = m.let('err_b', bFire.and(bresp.ne(RESP.OKAY)), { doc: 'a write burst failed' });
  const rErr = m.let('err_r', rValidReg.and(rRespReg.ne(RESP.OKAY)), { doc: 'a read beat failed' });
  const errValid = m.reg('err_seen', 1, { reset: 0, doc: 'a response has failed' });
  const errCode = m.reg('err_first', 4, { reset: 0, doc: 'the first failure\'s code' });
  const errCount = m.reg('err_total', 16, { reset: 0, doc: 'failed responses, saturating' });
  const code = mux(bErr, mux(bresp.eq(RESP.DECERR), ERR.WR_DECERR, ERR.WR_SLVERR), mux(rRespReg.eq(RESP.DECERR), ERR.RD_DECERR, ERR.RD_SLVERR));
  const sum = m.let('err_total_sum', errCount.zext(17).add(bErr.zext(17)).add(rErr.zext(17)));
  m.sync(() => {
    m.when(bErr.or(rErr).and(errValid.not()), () => {
      m.set(errValid, 1);
      m.set(errCode, code);
    });
    m.set(errCount, mux(sum.bit(16), lit(16, 0xffff), sum.slice(15, 0)));
  });
  m.assign(errValidOut, errValid);
  m.assign(errCodeOut, errCode);
  m.assign(errCountOut, errCount);
  return m.build();
}

