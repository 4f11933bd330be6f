import { type Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * AXI4 constants (ARM IHI 0022, AMBA AXI4) as rnic_axi_mem uses them, and the burst collector its
 * read and write sides share.
 */

/** AxBURST: incrementing, the only type issued. */
export const AXI_BURST_INCR = 0b01;
/** xRESP codes (A3.4.4). */
export const AXI_RESP = Object.freeze({ OKAY: 0b00, EXOKAY: 0b01, SLVERR: 0b10, DECERR: 0b11 });
/** AxCACHE: normal non-cacheable bufferable, as verilog-axi's axi_dma issues. */
export const AXI_CACHE = 0b0011;
/** AxPROT: unprivileged, non-secure, data access (verilog-axi's axi_dma). */
export const AXI_PROT = 0b010;
/** A burst must not cross a 4 KiB boundary (A3.4.1). */
export const AXI_BOUNDARY = 4096;
/** AxLEN is 8 bits in AXI4: up to 256 beats per INCR burst. */
export const AXI_LEN_BITS = 8;
export const AXI_MAX_BURST = 256;

/**
 * Error codes on err_code: verilog-axi axi_dma's DMA_ERROR_AXI_* values, so software written for it
 * reads them alike.
 */
export const AXI_MEM_ERROR = Object.freeze({ NONE: 0, RD_SLVERR: 4, RD_DECERR: 5, WR_SLVERR: 6, WR_DECERR: 7 });

/** Address bits of the host-memory ports and of AxADDR. */
export const AXI_ADDR_BITS = 64;

export interface BurstCollector {
  /** A burst is being collected (it has a beat and may take more). */
  readonly open: Signal;
  /** The beat in the collector this cycle (taken at the port a cycle ago) starts a new burst. */
  readonly opening: Expr;
  /** That beat's 4 KiB page (address bits 63:12). */
  readonly beatPage: Expr;
  /** A beat taken at the port is still on its way to the collector (in its input register). */
  readonly pending: Signal;
  /** A collected burst is complete this cycle (at most one per cycle). */
  readonly closeValid: Expr;
  /** Its first beat's address (AxADDR) and its beats − 1 (AxLEN). */
  readonly closeAddr: Expr;
  readonly closeLen: Expr;
}

/**
 * Coalesces beats taken one at a time (`fire`, at W-aligned `addr`) into INCR bursts: a beat at the
 * address after the beat taken before it continues the open burst; any other beat closes it and
 * opens the next. A burst also closes
 * - the cycle after it reaches `maxBurst` beats or takes the last beat of a 4 KiB page (so no burst
 *   crosses a 4 KiB boundary, AXI4 A3.4.1), or
 * - `wait` cycles after its last beat when none has come since (an isolated beat goes out too);
 *   cycles in which the producer offers a beat that is not taken (`held`: this side has no room)
 *   do not count, so a burst is not cut short by back-pressure from behind it.
 * One burst closes per cycle at most.
 *
 * Two steps, for timing: at the port, the beat's address is compared with the one after the last
 * beat taken (a register, so the wide compare ends at a flip-flop), and registered with that
 * verdict and whether it ends its page; the collector takes it from there a cycle later, deciding
 * from flip-flops alone.
 */
export function burstCollector(m: ModuleBuilder, name: string, o: { readonly bytes: number; readonly fire: Expr; readonly held: Expr; readonly addr: Expr; readonly maxBurst: number; readonly wait: number }): BurstCollector {
  const LW = Math.log2(o.bytes);
  const PB = Math.log2(AXI_BOUNDARY);
  const AB = o.addr.width;
  const beatBits = PB - LW;
  const pageBits = AB - PB;
  const waitBits = Math.max(1, Math.ceil(Math.log2(o.wait)));
  // ---- at the port
  const inBeatAddr = o.addr.slice(AB - 1, LW);
  const pending = m.reg(`${name}_in_valid`, 1, { reset: 0, doc: `${name}: a beat was taken last cycle` });
  const inAddr = m.reg(`${name}_in_addr`, AB - LW, { doc: `${name}: its address / W` });
  const follow = m.reg(`${name}_follow`, AB - LW, { doc: `${name}: the address / W after the last beat taken` });
  const inSeq = m.reg(`${name}_in_seq`, 1, { doc: `${name}: the beat follows the one taken before it` });
  const inEnd = m.reg(`${name}_in_end`, 1, { doc: `${name}: the beat is the last of its 4 KiB page` });
  m.sync(() => {
    m.set(pending, o.fire);
    m.when(o.fire, () => {
      m.set(inAddr, inBeatAddr);
      m.set(follow, inBeatAddr.add(1));
      m.set(inSeq, inBeatAddr.eq(follow));
      m.set(inEnd, o.addr.slice(PB - 1, LW).all());
    });
  });
  // ---- the collector, a cycle later
  const open = m.reg(`${name}_open`, 1, { reset: 0, doc: `${name}: a burst is being collected` });
  const full = m.reg(`${name}_full`, 1, { reset: 0, doc: `${name}: the open burst takes no more beats (maxBurst, or its page's last beat)` });
  const page = m.reg(`${name}_page`, pageBits, { doc: `${name}: the open burst's 4 KiB page (address bits 63:12)` });
  const start = m.reg(`${name}_start`, beatBits, { doc: `${name}: its first beat within the page` });
  const len = m.reg(`${name}_len`, AXI_LEN_BITS, { doc: `${name}: its beats - 1 (AxLEN)` });
  const quiet = m.reg(`${name}_quiet`, waitBits, { doc: `${name}: cycles without a beat since its last one` });
  const beatPage = inAddr.slice(AB - LW - 1, PB - LW);
  const cont = m.let(`${name}_cont`, open.and(full.not()).and(inSeq), { doc: `${name}: the beat continues the open burst` });
  const opening = pending.and(cont.not());
  const expire = m.let(`${name}_expire`, open.and(pending.not()).and(full.or(o.held.not().and(quiet.eq(o.wait - 1)))), { doc: `${name}: the open burst goes out without a new beat` });
  const closeValid = m.let(`${name}_close`, expire.or(pending.and(open).and(cont.not())), { doc: `${name}: the open burst is complete` });
  const lenAfter = mux(cont, len.add(1), lit(AXI_LEN_BITS, 0));
  const fullAfter = lenAfter.eq(o.maxBurst - 1).or(inEnd);
  m.sync(() => {
    m.when(
      pending,
      () => {
        m.set(open, 1);
        m.set(full, fullAfter);
        m.set(len, lenAfter);
        m.set(quiet, 0);
        m.when(cont.not(), () => {
          m.set(page, beatPage);
          m.set(start, inAddr.slice(beatBits - 1, 0));
        });
      },
      () =>
        m.when(expire, () => {
          m.set(open, 0);
          m.set(full, 0);
        }, () => m.when(open.and(o.held.not()), () => m.set(quiet, quiet.add(1)))),
    );
  });
  return { open, opening, beatPage, pending, closeValid, closeAddr: cat(page, start, lit(LW, 0)), closeLen: len };
}
