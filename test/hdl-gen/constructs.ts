import { ModuleBuilder, cat, lit, mux, sinkStream, sourceStream, type Module } from '../../hdl-gen/index';

/**
 * One tiny module per hdl-gen construct. emit-constructs.test.ts compares their Verilog with
 * golden text; lint-synth.test.ts runs every one of them through Verilator -Wall and yosys.
 * Each builder builds afresh (a new ModuleBuilder every call), so building twice is a real
 * determinism check. `children` are the modules an instance needs (emitted alongside for lint).
 */
export interface Construct {
  readonly name: string;
  readonly build: () => Module;
  readonly children?: () => Module[];
}

export function portsModule(): Module {
  const m = new ModuleBuilder('c_ports', 'Ports grouped by interface,\naligned on the widest type.');
  const clk = m.input('clk', 1, { group: 'Clock' });
  const a = m.input('cfg_a', 16, { group: 'Configuration', doc: 'first operand' });
  const b = m.input('cfg_b', 1, { group: 'Configuration' });
  const st = m.output('status', 18, { group: 'Status' });
  const raw = m.input('raw', 4);
  m.assign(st, cat(clk, b, a.xor(raw.repeat(4))));
  return m.build();
}

export function assignModule(): Module {
  const m = new ModuleBuilder('c_assign', 'A continuous assignment.');
  const a = m.input('a', 8);
  const y = m.output('y', 8);
  m.assign(y, a);
  return m.build();
}

export const BINARY_OPS = ['and', 'or', 'xor', 'add', 'sub', 'eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;

export function binaryModule(): Module {
  const m = new ModuleBuilder('c_binary', 'Every binary operator.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  const sh = m.input('sh', 3);
  for (const op of BINARY_OPS) {
    const e = a[op](b);
    m.assign(m.output(`y_${op}`, e.width), e);
  }
  m.assign(m.output('y_shl', 8), a.shl(sh));
  m.assign(m.output('y_shr', 8), b.shr(sh));
  m.assign(m.output('y_shl_k', 8), a.shl(3));
  return m.build();
}

export function unaryModule(): Module {
  const m = new ModuleBuilder('c_unary', 'Every unary operator.');
  const a = m.input('a', 8);
  m.assign(m.output('y_not', 8), a.not());
  m.assign(m.output('y_all', 1), a.all());
  m.assign(m.output('y_any', 1), a.any());
  m.assign(m.output('y_parity', 1), a.parity());
  return m.build();
}

export function sliceModule(): Module {
  const m = new ModuleBuilder('c_slice', 'Slices, pushed down to names where exact.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  const s = m.input('s', 1);
  m.assign(m.output('y_hi', 4), a.slice(7, 4));
  m.assign(m.output('y_bit', 1), a.bit(0));
  m.assign(m.output('y_cat', 8), cat(a, b).slice(11, 4));
  m.assign(m.output('y_mux', 4), mux(s, a, b).slice(3, 0));
  m.assign(m.output('y_xor', 4), a.xor(b).slice(5, 2));
  m.assign(m.output('y_not', 2), a.not().slice(1, 0));
  m.assign(m.output('y_slice', 3), a.slice(7, 2).slice(3, 1));
  m.assign(m.output('y_const', 4), lit(8, 0xa5).slice(7, 4).xor(b.slice(3, 0)));
  m.assign(m.output('y_sum_hi', 4), a.add(b).slice(7, 4));
  return m.build();
}

export function concatModule(): Module {
  const m = new ModuleBuilder('c_concat', 'Concatenation, replication, zero extension.');
  const a = m.input('a', 8);
  const b = m.input('b', 4);
  const c = m.input('c', 1);
  m.assign(m.output('y_cat', 13), cat(a, b, c));
  m.assign(m.output('y_rep', 4), c.repeat(4));
  m.assign(m.output('y_rep2', 8), b.repeat(2));
  m.assign(m.output('y_zext', 12), a.zext(12));
  return m.build();
}

export function muxModule(): Module {
  const m = new ModuleBuilder('c_mux', 'Two-way multiplexers.');
  const s = m.input('s', 1);
  const t = m.input('t', 1);
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  m.assign(m.output('y', 8), mux(s, a, b));
  m.assign(m.output('y_nested', 8), mux(s, a, mux(t, b, 0)));
  m.assign(m.output('y_bits', 1), mux(s.and(t), a.bit(7), b.bit(7)));
  return m.build();
}

export function constantsModule(): Module {
  const m = new ModuleBuilder('c_constants', 'Constants: binary up to 4 bits, hex above.');
  const a = m.input('a', 1);
  m.assign(m.output('k1', 1), a.xor(1));
  m.assign(m.output('k4', 4), lit(4, 5));
  m.assign(m.output('k5', 5), lit(5, 5));
  m.assign(m.output('k0', 8), lit(8, 0));
  m.assign(m.output('k64', 64), lit(64, 0xdeadbeefcafef00dn));
  return m.build();
}

export function combModule(): Module {
  const m = new ModuleBuilder('c_comb', 'A comb process: when/else, switch with and without default.');
  const c = m.input('c', 1);
  const op = m.input('op', 2);
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  const y = m.output('y', 8);
  const z = m.output('z', 8);
  const w = m.output('w', 1);
  m.comb(() => {
    m.when(
      c,
      () => m.set(y, a),
      () => m.set(y, b),
    );
    m.switch(
      op,
      [
        [0, () => m.set(z, a.and(b))],
        [[1, 2], () => m.set(z, a.or(b))],
      ],
      () => m.set(z, a.xor(b)),
    );
    // Covers all four values of op: no default needed.
    m.switch(op, [
      [[0, 3], () => m.set(w, 0)],
      [1, () => m.set(w, c)],
      [2, () => m.set(w, 1)],
    ]);
  });
  return m.build();
}

/** A switch without default that does not cover every value (a register keeps its value). */
export function partialSwitchModule(): Module {
  const m = new ModuleBuilder('c_switch_partial', 'A sync switch without default that covers only some values.');
  const clk = m.input('clk', 1);
  const rst = m.input('rst', 1);
  m.clockDomain('sync', clk, rst);
  const op = m.input('op', 2);
  const mode = m.reg('mode', 4, { reset: 0 });
  m.sync(() =>
    m.switch(op, [
      [0, () => m.set(mode, 1)],
      [[1, 2], () => m.set(mode, 2)],
    ]),
  );
  m.assign(m.output('y', 4), mode);
  return m.build();
}

export function regsModule(): Module {
  const m = new ModuleBuilder('c_regs', 'Registers with and without reset.');
  const clk = m.input('clk', 1, { group: 'Clock and synchronous active-high reset' });
  const rst = m.input('rst', 1, { group: 'Clock and synchronous active-high reset' });
  m.clockDomain('sync', clk, rst);
  const en = m.input('en', 1);
  const d = m.input('d', 8);
  const count = m.reg('count', 8, { reset: 0, doc: 'beats seen' });
  const hold = m.reg('hold', 8);
  const flag = m.reg('flag', 1, { reset: 1 });
  m.sync(() => {
    m.when(en, () => {
      m.set(count, count.add(1));
      m.set(hold, d);
      m.set(flag, 0);
    });
  });
  m.assign(m.output('count_out', 8), count);
  m.assign(m.output('hold_out', 8), hold.xor(flag.repeat(8)));
  return m.build();
}

export function domainsModule(): Module {
  const m = new ModuleBuilder('c_domains', 'Two clock domains.');
  const clkA = m.input('clk_a', 1, { group: 'Domain a' });
  const rstA = m.input('rst_a', 1, { group: 'Domain a' });
  const clkB = m.input('clk_b', 1, { group: 'Domain b (no reset)' });
  const da = m.clockDomain('a', clkA, rstA);
  const db = m.clockDomain('b', clkB, null);
  const x = m.input('x', 4);
  const ra = m.reg('ra', 4, { reset: 0, domain: da });
  const rb = m.reg('rb', 4, { domain: db });
  m.sync(() => m.set(ra, x));
  m.sync(() => m.set(rb, ra));
  m.assign(m.output('y', 4), rb);
  return m.build();
}

export function memoryModule(): Module {
  const m = new ModuleBuilder('c_memory', 'A memory: one synchronous write port, one combinational read.');
  const clk = m.input('clk', 1);
  m.clockDomain('sync', clk, null);
  const we = m.input('we', 1, { group: 'Write port' });
  const waddr = m.input('waddr', 4, { group: 'Write port' });
  const wdata = m.input('wdata', 8, { group: 'Write port' });
  const raddr = m.input('raddr', 4, { group: 'Read port' });
  const rdata = m.output('rdata', 8, { group: 'Read port' });
  const mem = m.memory('mem', 8, 16);
  m.memoryWrite(mem, we, waddr, wdata);
  m.assign(rdata, mem.read(raddr));
  return m.build();
}

export function leafModule(): Module {
  const m = new ModuleBuilder('c_leaf', 'The child of c_inst.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  m.assign(m.output('y', 8), a.xor(b));
  return m.build();
}

export function instanceModule(leaf: Module = leafModule()): Module {
  const m = new ModuleBuilder('c_inst', 'An instance of another module.');
  const a = m.input('a', 8);
  const b = m.input('b', 4);
  const y = m.output('y', 8);
  m.instance(leaf, 'u_leaf', { a, b: cat(b, b.not()), y });
  return m.build();
}

export function streamModule(): Module {
  const m = new ModuleBuilder('c_stream', 'A stream bundle passed through.');
  const s = sinkStream({ bytes: 2, user: 3 }).declare(m);
  const o = sourceStream({ bytes: 2, user: 3 }).declare(m);
  m.assign(o.data, s.data);
  m.assign(o.keep!, s.keep!);
  m.assign(o.valid, s.valid);
  m.assign(s.ready, o.ready);
  m.assign(o.last!, s.last!);
  m.assign(o.user!, s.user!);
  return m.build();
}

/** sinkStream(...).flip() is a source: m_axis_* with tready as the only input. */
export function flippedStreamModule(): Module {
  const m = new ModuleBuilder('c_stream_flip', 'A flipped sink is a source.');
  const src = sinkStream({ bytes: 1, keep: false, last: false }).flip().declare(m);
  const go = m.input('go', 1);
  m.assign(src.data, lit(8, 0x5a));
  m.assign(src.valid, go.and(src.ready));
  return m.build();
}

export function unusedModule(): Module {
  const m = new ModuleBuilder('c_unused', 'Signals left unread on purpose.');
  const a = m.input('a', 8);
  const spare = m.input('spare', 2);
  m.allowUnused(a, 'the upper nibble is reserved');
  m.allowUnused(spare, 'reserved for a later revision');
  const lo = m.output('lo', 4);
  m.assign(lo, a.slice(3, 0));
  const dbg = m.let('dbg', a.slice(3, 0).not());
  m.allowUnused(dbg, 'observed in simulation only');
  return m.build();
}

export function localparamModule(): Module {
  const m = new ModuleBuilder('c_localparam', 'Named constants.');
  const a = m.input('a', 8);
  const magic = m.constant('MAGIC', 8, 0x2a, 'the answer');
  const mode = m.constant('MODE_IDLE', 2, 1);
  m.assign(m.output('y', 8), a.xor(magic));
  m.assign(m.output('m', 2), mode);
  return m.build();
}

export function sharedModule(): Module {
  const m = new ModuleBuilder('c_shared', 'A shared subexpression is named once.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  const c = m.input('c', 8);
  const t = a.xor(b);
  m.assign(m.output('y', 8), t.and(c));
  m.assign(m.output('z', 8), t.or(c));
  return m.build();
}

/** A shared arithmetic result of which only some bits are read. */
export function sharedSliceModule(): Module {
  const m = new ModuleBuilder('c_shared_slice', 'Two slices of one sum, bits [7:4] never read.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  const sum = a.add(b);
  m.assign(m.output('y', 4), sum.slice(3, 0));
  m.assign(m.output('z', 3), sum.slice(2, 0));
  return m.build();
}

export const CONSTRUCTS: readonly Construct[] = [
  { name: 'c_ports', build: portsModule },
  { name: 'c_assign', build: assignModule },
  { name: 'c_binary', build: binaryModule },
  { name: 'c_unary', build: unaryModule },
  { name: 'c_slice', build: sliceModule },
  { name: 'c_concat', build: concatModule },
  { name: 'c_mux', build: muxModule },
  { name: 'c_constants', build: constantsModule },
  { name: 'c_comb', build: combModule },
  { name: 'c_switch_partial', build: partialSwitchModule },
  { name: 'c_regs', build: regsModule },
  { name: 'c_domains', build: domainsModule },
  { name: 'c_memory', build: memoryModule },
  { name: 'c_leaf', build: leafModule },
  { name: 'c_inst', build: () => instanceModule(), children: () => [leafModule()] },
  { name: 'c_stream', build: streamModule },
  { name: 'c_stream_flip', build: flippedStreamModule },
  { name: 'c_unused', build: unusedModule },
  { name: 'c_localparam', build: localparamModule },
  { name: 'c_shared', build: sharedModule },
  { name: 'c_shared_slice', build: sharedSliceModule },
];
