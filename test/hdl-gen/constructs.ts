import { Expr, ModuleBuilder, cat, lit, mux, sinkStream, sourceStream, xorAll, type Module } from '../../hdl-gen/index';

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

/** Equal expressions built separately (different objects) are one expression: named once. */
export function structuralShareModule(): Module {
  const m = new ModuleBuilder('c_share_struct', 'Structurally equal expressions built twice are one temporary.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  const c = m.input('c', 8);
  const s = m.input('s', 4);
  // a + b, built twice, each copy read once.
  m.assign(m.output('y', 8), a.add(b).and(c));
  m.assign(m.output('z', 8), a.add(b).or(c));
  // (a ^ b) & c, built twice: named once; a ^ b inside it is read once (by the temporary).
  m.assign(m.output('w', 8), a.xor(b).and(c).not());
  m.assign(m.output('v', 8), a.xor(b).and(c).or(b));
  // s == 4'b1000, built three times.
  m.assign(m.output('p', 1), s.eq(8).and(a.bit(0)));
  m.assign(m.output('q', 1), s.eq(8).or(b.bit(0)));
  m.assign(m.output('r', 1), s.eq(8).xor(c.bit(0)));
  return m.build();
}

/** Named case labels: constant()s are printed by name (`S_IDLE: begin`), numbers as literals. */
export function caseNamesModule(): Module {
  const m = new ModuleBuilder('c_case_names', 'A state machine whose case labels are localparams.');
  const clk = m.input('clk', 1);
  const rst = m.input('rst', 1);
  m.clockDomain('sync', clk, rst);
  const go = m.input('go', 1);
  const sIdle = m.constant('S_IDLE', 2, 0, 'waiting');
  const sRun = m.constant('S_RUN', 2, 1, 'running');
  const sDone = m.constant('S_DONE', 2, 2);
  const state = m.reg('state', 2, { reset: 0 });
  m.sync(() =>
    m.switch(state, [
      [sIdle, () => m.when(go, () => m.set(state, sRun))],
      [sRun, () => m.set(state, sDone)],
      [[sDone, 3], () => m.set(state, sIdle)],
    ]),
  );
  m.assign(m.output('busy', 1), state.ne(sIdle));
  return m.build();
}

/** A long name for a wide, many-operand construct: LONG_OPERANDS of them, 8 bits each. */
const LONG_OPERANDS = 24;

/**
 * Everything that used to give a line longer than 160 columns: XOR and OR chains and a
 * concatenation that fill lines, a concatenation of long parts (one a line), a priority mux chain,
 * a long `if` condition, a case with many labels, a long instance connection and memory write, a
 * wide reset value and localparam, and docs too long to trail their declarations.
 */
export function longLinesModule(leaf: Module = longLeafModule()): Module {
  const m = new ModuleBuilder(
    'c_long_lines',
    'Long lines broken by the pretty-printer. ' + 'This sentence of the module documentation is long enough to need wrapping onto a second line of the header comment. '.repeat(2),
  );
  const clk = m.input('clk', 1, { group: 'Clock and synchronous active-high reset' });
  const rst = m.input('rst', 1, { group: 'Clock and synchronous active-high reset' });
  m.clockDomain('sync', clk, rst);
  const w = Array.from({ length: LONG_OPERANDS }, (_, i) =>
    m.input(`operand_word_${String(i).padStart(2, '0')}`, 8, {
      group: 'Operands',
      ...(i === 0 ? { doc: 'the first operand word; this documentation is deliberately much longer than fits after the declaration, so it goes on comment lines of its own above it' } : {}),
    }),
  );
  const sel = m.input('sel', 3, { group: 'Control' });
  const op = m.input('op', 6, { group: 'Control' });
  m.assign(m.output('parity_all', 8), xorAll(w, 8));
  m.assign(m.output('any_all', 8), w.slice(1).reduce<Expr>((x, y) => x.or(y), w[0]!));
  m.assign(m.output('packed_words', 8 * LONG_OPERANDS), cat(...w));
  m.assign(
    m.output('picked', 32),
    cat(...[0, 1, 2, 3].map((i) => mux(sel.eq(i), w[i]!.xor(w[i + 4]!).and(w[i + 8]!), w[i + 12]!.or(w[i + 16]!).add(w[i + 20]!)))),
  );
  let chosen = w[7]!.sub(w[15]!);
  for (let i = 6; i >= 0; i--) chosen = mux(sel.eq(i), w[i]!.add(w[i + 8]!).xor(w[i + 16]!), chosen);
  m.assign(m.output('chosen', 8), chosen);
  const wide = m.constant('WIDE_PATTERN', 600, (1n << 599n) | 0x0123456789abcdefn, 'a 600-bit constant: a literal too long for one line');
  const acc = m.reg('acc', 8, { reset: 0, doc: 'the accumulator; this documentation is also too long to trail its declaration on the same line, which it would make longer than 160' });
  const big = m.reg('big', 600, { reset: (1n << 599n) | 1n });
  m.sync(() => {
    m.when(
      w.slice(0, 20).map((x) => x.ne(0)).reduce((x, y) => x.and(y)),
      () => m.set(acc, acc.add(w[0]!)),
    );
    m.switch(op, [
      [Array.from({ length: 40 }, (_, i) => i), () => m.set(big, big.xor(wide))],
      [40, () => m.set(big, cat(big.slice(591, 0), w[0]!))],
    ]);
  });
  m.assign(m.output('acc_out', 8), acc);
  m.assign(m.output('big_parity', 1), big.parity());
  const mem = m.memory('mem', 8 * LONG_OPERANDS, 4);
  m.memoryWrite(mem, sel.eq(7), sel.slice(1, 0), cat(...w.map((x) => x.not())));
  m.assign(m.output('mem_out', 8 * LONG_OPERANDS), mem.read(op.slice(1, 0)));
  const y = m.wire('leaf_y', 8);
  m.instance(leaf, 'u_leaf', { a: w.slice(1, 12).reduce<Expr>((x, z) => x.add(z), w[0]!), b: w.slice(13).reduce<Expr>((x, z) => x.add(z), w[12]!), y });
  m.assign(m.output('leaf_out', 8), y);
  return m.build();
}

/** The child of c_long_lines. */
export function longLeafModule(): Module {
  const m = new ModuleBuilder('c_long_leaf', 'The child of c_long_lines.');
  const a = m.input('a', 8);
  const b = m.input('b', 8);
  m.assign(m.output('y', 8), a.xor(b));
  return m.build();
}

/** A 520-bit literal read deep in nested ifs: it fits no line there, so a temporary names it. */
export function deepAtomModule(): Module {
  const m = new ModuleBuilder('c_deep_atom', 'A literal too long for the line that reads it.');
  const c = m.input('c', 5);
  const d = m.input('d', 520);
  const y = m.output('y', 520);
  const k = lit(520, (1n << 519n) | 0x0123456789abcdefn);
  m.comb(() => {
    m.set(y, d);
    m.when(c.bit(0), () => m.when(c.bit(1), () => m.when(c.bit(2), () => m.when(c.bit(3), () => m.set(y, mux(c.bit(4), k, d.not()))))));
  });
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
  { name: 'c_share_struct', build: structuralShareModule },
  { name: 'c_case_names', build: caseNamesModule },
  { name: 'c_long_leaf', build: longLeafModule },
  { name: 'c_long_lines', build: () => longLinesModule(), children: () => [longLeafModule()] },
  { name: 'c_deep_atom', build: deepAtomModule },
];
