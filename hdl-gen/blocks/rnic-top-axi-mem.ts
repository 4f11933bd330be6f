import { mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import type { DdpRxOptions } from './ddp-rx';
import { axiMemName, rnicAxiMemModule, type AxiMemOptions } from './rnic-axi-mem';
import { rnicTopModule } from './rnic-top';

/**
 * rnic_top_axi_mem_w<W>: rnic_top_w<W> with its host memory behind an AXI4 master
 * (rnic_axi_mem_w<W>, rnic-axi-mem.ts). Port map against rnic_top_w<W>:
 * - mem_wr_* and mem_rd_* are gone; in their place the AXI4 master m_axi_aw*, w*, b*, ar*, r*
 *   (8·W data bits, 64 address bits, log2(readIds) ID bits) and its error status mem_err_valid,
 *   mem_err_code, mem_err_count (rnic_axi_mem's err_*: the datapath carries on after a failed
 *   response, the host must reset the RNIC).
 * - m_cq_valid / m_cq_ready: a completion-queue entry is held until every write beat taken
 *   before it appeared has been answered on B (the adapter's wr_beats / wr_beats_done), so the host
 *   never sees a completion before the data it completes is in memory (what a PCIe host gets
 *   from posted-write order, and what an AXI master has to wait for).
 * - idle and rx_idle also wait for the adapter: rx_idle for every write to be answered, idle for
 *   every read and write.
 * - Every other port is rnic_top_w<W>'s, passed through under its name.
 */
const IDLE_DOCS: Readonly<Record<string, string>> = {
  rx_idle: 'every ULPDU received is handled and its placement answered on B',
  idle: 'nothing in progress (memory reads and writes included), but work requests a fence holds',
};

export function rnicTopAxiMemModule(bytes: number, qps = 2, opts: DdpRxOptions = {}, axi: AxiMemOptions = {}): Module {
  const top = rnicTopModule(bytes, qps, opts);
  const mem = rnicAxiMemModule(bytes, axi);
  const m = new ModuleBuilder(
    `rnic_top_axi_mem_w${bytes}${axiMemName(bytes, axi).slice(`rnic_axi_mem_w${bytes}`.length)}`,
    `The iWARP RNIC (${top.name}, ${qps} QP${qps > 1 ? 's' : ''}, ${bytes} octets per beat) with its host memory behind an AXI4\n` +
      `master (${mem.name}: INCR bursts, write strobes, read IDs with a reorder buffer). m_cq entries\n` +
      'wait until the writes before them are answered on B; idle and rx_idle include the master;\n' +
      `every other port is ${top.name}'s.`,
    { bytes, qps },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const topConns: Record<string, Signal> = { clk, rst };
  const memConns: Record<string, Signal> = { clk, rst };
  const inner = (n: string, width: number): Signal => m.wire(`rnic_${n}`, width);
  const own: Record<string, Signal> = {};
  let axiDeclared = false;
  const declareAxi = () => {
    for (const p of mem.ports.filter((x) => x.name.startsWith('m_axi_'))) memConns[p.name] = m.portLike(mem, p.name);
    const eg = 'AXI4 master errors (sticky until rst; the datapath has no memory-error path: reset the RNIC)';
    for (const n of ['valid', 'code', 'count']) memConns[`err_${n}`] = m.portLike(mem, `err_${n}`, `mem_err_${n}`, eg);
    axiDeclared = true;
  };
  for (const p of top.ports) {
    if (p.name === 'clk' || p.name === 'rst') continue;
    if (p.name.startsWith('mem_')) {
      // rnic_top's memory ports go to the adapter's, which carry the same names.
      if (!axiDeclared) declareAxi();
      const w = inner(p.name, p.width);
      topConns[p.name] = w;
      memConns[p.name] = w;
    } else if (['m_cq_valid', 'm_cq_ready', 'idle', 'rx_idle'].includes(p.name)) {
      // Gated or combined below: a port of the wrapper in its place, a wire to rnic_top.
      topConns[p.name] = inner(p.name, p.width);
      own[p.name] = p.name.endsWith('idle')
        ? m.output(p.name, 1, { group: p.group ?? undefined, doc: IDLE_DOCS[p.name]! })
        : m.portLike(top, p.name);
    } else topConns[p.name] = m.portLike(top, p.name);
  }
  if (!axiDeclared) throw new Error(`internal: ${top.name} has no mem_* ports`);
  for (const n of ['idle', 'wr_idle', 'wr_beats', 'wr_beats_done']) memConns[n] = m.wire(`axi_${n}`, mem.ports.find((x) => x.name === n)!.width);

  // ---- completions after their data: the write fence on m_cq -----------------------------------
  const cqValid = own.m_cq_valid!;
  const cqReady = own.m_cq_ready!;
  const seq = memConns.wr_beats!;
  const done = memConns.wr_beats_done!;
  const topValid = topConns.m_cq_valid!;
  const marked = m.reg('cq_marked', 1, { reset: 0, doc: 'the entry on rnic_top\'s m_cq has its mark' });
  const passed = m.reg('cq_passed', 1, { reset: 0, doc: 'every write beat before it is answered' });
  const mark = m.reg('cq_mark', seq.width, { doc: 'wr_beats when the entry appeared: the beats it waits for' });
  // Fewer beats than half the count's range are ever in flight, so the sign of done - mark says
  // whether done has reached the mark; once it has, the entry stays passed (done moves on).
  const reached = m.let('cq_reached', done.sub(mark).bit(seq.width - 1).not(), { doc: 'wr_beats_done has reached the mark' });
  const pass = m.let('cq_pass', mux(marked, passed.or(reached), done.eq(seq)), { doc: 'the entry may go to the host' });
  m.assign(cqValid, topValid.and(pass));
  m.assign(topConns.m_cq_ready!, cqReady.and(pass));
  const taken = m.let('cq_taken', topValid.and(cqReady).and(pass));
  m.sync(() => {
    m.when(taken.or(topValid.not()), () => {
      m.set(marked, 0);
      m.set(passed, 0);
    }, () => {
      m.set(marked, 1);
      m.set(passed, pass);
      m.when(marked.not(), () => m.set(mark, seq));
    });
  });

  // ---- idle: the datapath's and the master's ---------------------------------------------------
  m.assign(own.rx_idle!, topConns.rx_idle!.and(memConns.wr_idle!));
  m.assign(own.idle!, topConns.idle!.and(memConns.idle!));

  m.instance(top, 'u_rnic', topConns);
  m.instance(mem, 'u_axi_mem', memConns);
  return m.build();
}
