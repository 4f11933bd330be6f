import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cat } from '../../hdl-gen/core/expr';
import { ModuleBuilder, type Module } from '../../hdl-gen/core/module';
import { sinkStream, sourceStream } from '../../hdl-gen/core/stream';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { portsOf } from '../../hdl-gen/gen/generate';
import { cacheDir } from '../../hdl-gen/gen/paths';
import { contextMemory } from '../../hdl-gen/lib/context';
import { fifo } from '../../hdl-gen/lib/fifo';
import { ram } from '../../hdl-gen/lib/ram';
import { record } from '../../hdl-gen/lib/record';
import { pipeline } from '../../hdl-gen/lib/stage';
import { synthesize } from '../../flow/synth';
import { AxisSink, AxisSource } from '../../sim/cocotb/axis';
import { random as randomPause } from '../../sim/cocotb/pause';
import { Testbench } from '../../sim/cocotb/testbench';
import { buildModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { withSeed } from '../support/random';

/** Writes a module's Verilog into the cache (hdl-gen/gen/paths.ts) and opens it in Verilator. */
function simulate(m: Module): SimModel {
  const dir = cacheDir('lib-hardware');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${m.name}.v`);
  writeFileSync(file, emitVerilog(m));
  return SimModel.open(buildModel({ top: m.name, sources: [file], ports: portsOf(m).map((p) => ({ name: p.name, direction: p.direction, width: p.width })) }));
}

const BEAT = record('beat', { data: 64, keep: 8, last: 1, user: 3 });

/** AXI4-Stream in, three skid buffers (hdl-gen/lib/stage.ts), AXI4-Stream out. */
function skidChain(): Module {
  const m = new ModuleBuilder('skid_chain', 'Three skid buffers in a row.');
  m.clockDomain('sync', m.input('clk', 1), m.input('rst', 1));
  const s = sinkStream({ bytes: 8, user: 3 }).declare(m);
  const o = sourceStream({ bytes: 8, user: 3 }).declare(m);
  const p = pipeline(m, 'stage', { valid: s.valid, data: BEAT.pack({ data: s.data, keep: s.keep!, last: s.last!, user: s.user! }) }, 3, { skid: true });
  m.assign(s.ready, p.ready);
  const v = BEAT.view(p.out.data);
  m.assign(o.valid, p.out.valid);
  m.assign(o.data, v.data);
  m.assign(o.keep!, v.keep);
  m.assign(o.last!, v.last);
  m.assign(o.user!, v.user);
  m.assign(p.out.ready, o.ready);
  return m.build();
}

describe('hdl-gen/lib in hardware', () => {
  test('skid buffers: every frame through under random back-pressure on both sides, and no path from m_axis_tready to s_axis_tready', () => {
    const mod = skidChain();
    expect([...(mod.combPaths.get('s_axis_tready') ?? [])]).toEqual([]);
    const model = simulate(mod);
    withSeed(0x5c1d, (r) => {
      const tb = new Testbench(model);
      const src = tb.add(new AxisSource(model, 's_axis', { pause: randomPause(r.u32(), 0.4) }));
      const sink = tb.add(new AxisSink(model, 'm_axis', { pause: randomPause(r.u32(), 0.4) }));
      tb.reset();
      const frames = Array.from({ length: 300 }, () => r.bytes(r.int(1, 40)));
      for (const f of frames) src.send(f, r.int(0, 7));
      tb.until(() => sink.receivedCount === frames.length, 100_000, 'every frame through the skid buffers');
      const got = sink.drain();
      got.forEach((g, i) => expect(Buffer.compare(g.data, frames[i]!), `frame ${i}`).toBe(0));
    });
    model.close();
  });

  test('a FIFO (lib/fifo.ts) of 4: empty, full, count and head follow a queue under random push, pop and flush, across pointer wraps', () => {
    const m = new ModuleBuilder('fifo4', 'A small FIFO and its flags.');
    m.clockDomain('sync', m.input('clk', 1), m.input('rst', 1));
    const q = fifo(m, 'q', 8, 4, { push: m.input('push', 1), data: m.input('data', 8), pop: m.input('pop', 1), flush: m.input('flush', 1) });
    m.assign(m.output('empty', 1), q.empty);
    m.assign(m.output('full', 1), q.full);
    m.assign(m.output('count', 3), q.count);
    m.assign(m.output('head', 8), q.head);
    const model = simulate(m.build());
    const h = (n: string) => model.handle(n);
    withSeed(0xf1f0, (r) => {
      model.pokeNumber(h('rst'), 1);
      model.tick();
      model.pokeNumber(h('rst'), 0);
      const ref: number[] = [];
      let fulls = 0;
      for (let t = 0; t < 3000; t++) {
        model.eval();
        expect(model.peekNumber(h('empty')), `cycle ${t}`).toBe(ref.length === 0 ? 1 : 0);
        expect(model.peekNumber(h('full')), `cycle ${t}`).toBe(ref.length === 4 ? 1 : 0);
        expect(model.peekNumber(h('count')), `cycle ${t}`).toBe(ref.length);
        if (ref.length) expect(model.peekNumber(h('head')), `cycle ${t}`).toBe(ref[0]);
        if (ref.length === 4) fulls++;
        const push = ref.length < 4 && r.bool(0.55);
        const pop = ref.length > 0 && r.bool(0.45);
        const flush = r.bool(0.02);
        const data = r.int(0, 255);
        model.pokeNumber(h('push'), push ? 1 : 0);
        model.pokeNumber(h('pop'), pop ? 1 : 0);
        model.pokeNumber(h('flush'), flush ? 1 : 0);
        model.pokeNumber(h('data'), data);
        model.tick();
        // A flush wins over a pop; a push in the same cycle is kept.
        if (flush) ref.length = 0;
        else if (pop) ref.shift();
        if (push) ref.push(data);
      }
      expect(fulls).toBeGreaterThan(100);
    });
    model.close();
  });

  test('a context memory returns, L cycles after a lookup, the record with every update issued until then (forwarded), for L = 1 and 2', () => {
    for (const latency of [1, 2] as const) {
      const m = new ModuleBuilder(`ctx_l${latency}`, 'A context memory and its ports.');
      m.clockDomain('sync', m.input('clk', 1), m.input('rst', 1));
      const ctx = contextMemory(m, 'ctx', { width: 16, depth: 8, latency });
      ctx.lookup(m.input('lk_index', 3), m.input('lk_valid', 1));
      ctx.update(m.input('up_valid', 1), m.input('up_index', 3), m.input('up_data', 16));
      m.assign(m.output('value', 16), ctx.value);
      const model = simulate(m.build());
      withSeed(0xc0f7 + latency, (r) => {
        const mem = new Array<number>(8).fill(0);
        const h = (n: string) => model.handle(n);
        // Every index written once first, so nothing reads an unwritten entry.
        for (let i = 0; i < 8; i++) {
          model.pokeNumber(h('up_valid'), 1);
          model.pokeNumber(h('up_index'), i);
          model.pokeNumber(h('up_data'), i);
          model.pokeNumber(h('lk_valid'), 0);
          model.tick();
          mem[i] = i;
        }
        const pending: { due: number; index: number }[] = [];
        let checked = 0;
        for (let t = 0; t < 4000; t++) {
          // Lookups and updates of few indices, often the same one: every hazard.
          const lk = r.bool(0.6);
          const li = r.int(0, 2);
          const up = r.bool(0.6);
          const ui = r.int(0, 2);
          const ud = r.int(0, 0xffff);
          model.pokeNumber(h('lk_valid'), lk ? 1 : 0);
          model.pokeNumber(h('lk_index'), li);
          model.pokeNumber(h('up_valid'), up ? 1 : 0);
          model.pokeNumber(h('up_index'), ui);
          model.pokeNumber(h('up_data'), ud);
          const due = pending.find((p) => p.due === t);
          if (due) {
            expect(model.peekNumber(h('value')), `cycle ${t}, index ${due.index}`).toBe(mem[due.index]);
            checked++;
          }
          if (lk) pending.push({ due: t + latency, index: li });
          model.tick();
          if (up) mem[ui] = ud;
        }
        expect(checked).toBeGreaterThan(2000);
      });
      model.close();
    }
  });

  test.each(['ice40', 'xilinx'] as const)('%s: a RAM of 1024 x 32 with read latency 1 or 2 is block RAM', (target) => {
    const m = new ModuleBuilder('ram_pair', 'Two RAMs, read latency 1 and 2.');
    const rst = m.input('rst', 1);
    m.clockDomain('sync', m.input('clk', 1), rst);
    m.allowUnused(rst, 'block RAM has no reset');
    const outs = [1, 2].map((latency) => {
      const r = ram(m, `r${latency}`, { width: 32, depth: 1024, latency: latency as 1 | 2 });
      r.read(m.input(`rd_addr${latency}`, 10), m.input(`rd_en${latency}`, 1));
      r.write(m.input(`wr_en${latency}`, 1), m.input(`wr_addr${latency}`, 10), m.input(`wr_data${latency}`, 32));
      return r.data;
    });
    m.assign(m.output('rd_data', 64), cat(outs[1]!, outs[0]!));
    const mod = m.build();
    const dir = cacheDir('lib-hardware');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'ram_pair.v');
    writeFileSync(file, emitVerilog(mod));
    const res = synthesize({ top: 'ram_pair', sources: [file], target, cacheRoot: join(dir, 'synth') });
    // 2 x 32 kbit: iCE40 SB_RAM40_4K holds 4 kbit, Xilinx RAMB18 18 kbit.
    expect(res.rams).toBeGreaterThanOrEqual(target === 'ice40' ? 16 : 2);
    expect(res.lutRams ?? 0).toBe(0);
  });
});
