import { describe, expect, test } from 'vitest';
import { HdlError, ModuleBuilder, cat, lit, mux, type Module } from '../../hdl-gen/index';
import { BINARY_OPS } from './constructs';

/**
 * Elaboration checks: every error is an HdlError whose message names the offending signal and
 * the place in the generator (this file) that caused it.
 */

/** The line this is called from. */
function here(): number {
  const frame = new Error().stack!.split('\n')[2]!;
  return Number(/:(\d+):\d+\)?\s*$/.exec(frame)![1]);
}

function hdlError(fn: () => unknown): HdlError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(HdlError);
    return e as HdlError;
  }
  throw new Error('expected an HdlError; nothing was thrown');
}

/** `fn` throws an HdlError naming every one of `names`, located in this file (at `line` if given). */
function expectError(fn: () => unknown, names: readonly (string | RegExp)[], line?: number): HdlError {
  const e = hdlError(fn);
  for (const n of names) {
    if (typeof n === 'string') expect(e.message).toContain(n);
    else expect(e.message).toMatch(n);
  }
  expect(e.message).toMatch(/checks\.test\.ts:\d+/);
  expect(e.location?.file).toMatch(/checks\.test\.ts$/);
  if (line !== undefined) {
    expect(e.location?.line).toBe(line);
    expect(e.message).toContain(`checks.test.ts:${line}:`);
  }
  return e;
}

const SYMBOL: Record<(typeof BINARY_OPS)[number], string> = {
  and: '&',
  or: '|',
  xor: '^',
  add: '+',
  sub: '-',
  eq: '==',
  ne: '!=',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
};

/** A child whose output y depends combinationally on a only (b goes through a register). */
function mixedChild(): Module {
  const m = new ModuleBuilder('mixed_child', 'y = a ^ registered b');
  const clk = m.input('clk', 1);
  m.clockDomain('sync', clk, null);
  const a = m.input('a', 1);
  const b = m.input('b', 1);
  const r = m.reg('r', 1);
  m.sync(() => m.set(r, b));
  m.assign(m.output('y', 1), a.xor(r));
  return m.build();
}

function inverter(): Module {
  const m = new ModuleBuilder('inverter', 'y = ~a');
  const a = m.input('a', 4);
  m.assign(m.output('y', 4), a.not());
  return m.build();
}

describe('widths', () => {
  test.each(BINARY_OPS.map((op) => [op, SYMBOL[op]] as const))("'%s' (%s) of 8 and 4 bits names both signals", (op, symbol) => {
    const m = new ModuleBuilder('w', 'x');
    const a = m.input('a', 8);
    const b = m.input('b', 4);
    const at = here(); expectError(() => a[op](b), [`'${symbol}'`, `8 bits (signal 'a')`, `4 bits (signal 'b')`], at);
  });

  test('assign of a value with the wrong width names the target', () => {
    const m = new ModuleBuilder('w', 'x');
    const a = m.input('a', 8);
    const y = m.output('y', 4);
    const at = here(); expectError(() => m.assign(y, a), ["'y' is 4 bits", 'the value is 8 bits'], at);
  });

  test('set of a value with the wrong width, in comb and in sync, names the target', () => {
    const m = new ModuleBuilder('w', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const a = m.input('a', 8);
    const y = m.output('y', 4);
    const r = m.reg('r', 3);
    m.comb(() => {
      const at = here(); expectError(() => m.set(y, a), ["'y' is 4 bits", 'the value is 8 bits'], at);
    });
    m.sync(() => {
      const at = here(); expectError(() => m.set(r, a.slice(3, 0)), ["'r' is 3 bits", 'the value is 4 bits'], at);
    });
  });

  test('mux arms of different widths: the error names both arms', () => {
    const m = new ModuleBuilder('w', 'x');
    const s = m.input('s', 1);
    const a = m.input('a', 8);
    const b = m.input('b', 4);
    const at = here(); const e = expectError(() => mux(s, a, b), ["mux arms differ in width: 8 bits (signal 'a') vs 4 bits (signal 'b')"], at);
    expect(e.message, 'the message should name the arms').toContain("'a'");
    expect(e.message, 'the message should name the arms').toContain("'b'");
  });

  test('a mux select wider than 1 bit names the select', () => {
    const m = new ModuleBuilder('w', 'x');
    const sel = m.input('sel', 2);
    const a = m.input('a', 8);
    const at = here(); expectError(() => mux(sel, a, a), ['mux select must be 1 bit, got 2', "signal 'sel'"], at);
  });

  test('a when() condition wider than 1 bit', () => {
    const m = new ModuleBuilder('w', 'x');
    const c = m.input('c', 2);
    const y = m.output('y', 1);
    m.comb(() => {
      const at = here(); expectError(() => m.when(c, () => m.set(y, 1)), ['when() condition must be 1 bit, got 2'], at);
      m.set(y, 0);
    });
  });

  test('a slice out of range names the signal and the range', () => {
    const m = new ModuleBuilder('w', 'x');
    const a = m.input('a', 8);
    let at = here(); expectError(() => a.slice(8, 0), ['slice [8:0]', '8-bit value', "signal 'a'"], at);
    at = here(); expectError(() => a.slice(2, 3), ['slice [2:3]', "signal 'a'"], at);
    at = here(); expectError(() => a.slice(3, -1), ['slice [3:-1]', "signal 'a'"], at);
    at = here(); expectError(() => a.bit(8), ['slice [8:8]', "signal 'a'"], at);
    at = here(); expectError(() => a.slice(7, 4).slice(4, 0), ['slice [4:0] is outside a 4-bit value'], at);
  });

  test('a constant too wide for its width', () => {
    let at = here(); expectError(() => lit(4, 16), ['constant 16 does not fit 4 bits'], at);
    at = here(); expectError(() => lit(8, -1), ['constant -1 does not fit 8 bits'], at);
    at = here(); expectError(() => lit(0, 0), ['width must be an integer from 1 to 65536, got 0'], at);
  });

  test('a number too wide for the signal it is assigned to or combined with names that signal', () => {
    const m = new ModuleBuilder('w', 'x');
    m.clockDomain('sync', m.input('clk', 1), m.input('rst', 1));
    const a = m.input('a', 8);
    const y = m.output('y', 8);
    const cases: [string, () => unknown][] = [
      ['y', () => m.assign(y, 300)],
      ['a', () => a.add(256)],
      ['r', () => m.reg('r', 4, { reset: 16 })],
    ];
    for (const [name, fn] of cases) {
      const e = hdlError(fn);
      expect(e.message).toMatch(/does not fit/);
      expect(e.message).toMatch(/checks\.test\.ts:\d+/);
      expect.soft(e.message, `the error should name '${name}'`).toContain(`'${name}'`);
    }
  });

  test('switch case values must fit the subject and appear once', () => {
    const m = new ModuleBuilder('w', 'x');
    const op = m.input('op', 2);
    const y = m.output('y', 1);
    m.comb(() => {
      let at = here(); expectError(() => m.switch(op, [[4, () => m.set(y, 0)]], () => m.set(y, 1)), ['constant 4 does not fit 2 bits'], at);
      at = here(); expectError(() => m.switch(op, [[[1, 2], () => m.set(y, 0)], [2, () => m.set(y, 0)]], () => m.set(y, 1)), ['switch case 2 appears twice'], at);
      m.set(y, 0);
    });
  });

  test('a switch case given as a constant(): of this module, as wide as the subject, a value that appears once', () => {
    const m = new ModuleBuilder('wn', 'x');
    const other = new ModuleBuilder('other', 'x');
    const op = m.input('op', 2);
    const y = m.output('y', 1);
    const one = m.constant('ONE', 2, 1);
    const wide = m.constant('WIDE', 3, 2);
    const foreign = other.constant('FOREIGN', 2, 2);
    m.comb(() => {
      let at = here(); expectError(() => m.switch(op, [[[one, 1], () => m.set(y, 0)]], () => m.set(y, 1)), ['switch case 1 appears twice'], at);
      at = here(); expectError(() => m.switch(op, [[2, () => m.set(y, 0)], [[0, one], () => m.set(y, 0)], [one, () => m.set(y, 0)]], () => m.set(y, 1)), ['switch case 1 (ONE) appears twice'], at);
      at = here(); expectError(() => m.switch(op, [[wide, () => m.set(y, 0)]], () => m.set(y, 1)), ["switch case 'WIDE' is 3 bits, the subject is 2 bits"], at);
      at = here(); expectError(() => m.switch(op, [[foreign, () => m.set(y, 0)]], () => m.set(y, 1)), ["switch case 'FOREIGN' is not a constant() of module wn"], at);
      at = here(); expectError(() => m.switch(op, [[op.xor(1), () => m.set(y, 0)]], () => m.set(y, 1)), ["switch case labels are numbers or constant()s of wn, got a 'binary' expression"], at);
      m.switch(op, [[[one, 2], () => m.set(y, 0)]], () => m.set(y, 1));
    });
    expect(() => m.build()).not.toThrow();
  });
});

describe('memories', () => {
  test('a write enable wider than 1 bit and write data of the wrong width name the memory', () => {
    const m = new ModuleBuilder('mm', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const mem = m.memory('mem', 8, 16);
    const addr = m.input('addr', 4);
    let at = here(); expectError(() => m.memoryWrite(mem, m.input('we', 2), addr, m.input('d', 8)), ["memory 'mem' write enable must be 1 bit"], at);
    at = here(); expectError(() => m.memoryWrite(mem, m.input('we1', 1), addr, m.input('d4', 4)), ["memory 'mem' is 8 bits wide, write data is 4"], at);
  });

  test('a memory write needs a clock domain', () => {
    const m = new ModuleBuilder('mm', 'x');
    const mem = m.memory('mem', 8, 16);
    const at = here(); expectError(() => m.memoryWrite(mem, m.input('we', 1), m.input('addr', 4), m.input('d', 8)), ["memory 'mem' write needs a clock domain"], at);
  });

  test('a memory address must have log2(depth) bits, on the write and the read port', () => {
    // Verilator -Wall: "Bit extraction of array[7:0] requires 3 bit index, not 2 bits" (WIDTH).
    const m = new ModuleBuilder('mm', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const mem = m.memory('mem', 4, 8);
    const narrow = m.input('narrow', 2);
    const wide = m.input('wide', 4);
    const we = m.input('we', 1);
    const d = m.input('d', 4);
    expect.soft(() => m.memoryWrite(mem, we, narrow, d), 'a 2-bit write address into 8 entries').toThrow(HdlError);
    expect.soft(() => m.memoryWrite(mem, we, wide, d), 'a 4-bit write address into 8 entries').toThrow(HdlError);
    expect.soft(() => mem.read(narrow), 'a 2-bit read address into 8 entries').toThrow(HdlError);
  });

  test('a memory that is written but never read', () => {
    // Verilator -Wall: "Signal is not used: 'mem'" (UNUSEDSIGNAL).
    const m = new ModuleBuilder('mm', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const we = m.input('we', 1);
    const addr = m.input('addr', 3);
    const d = m.input('d', 4);
    const at = here(); const mem = m.memory('mem', 4, 8);
    m.memoryWrite(mem, we, addr, d);
    m.assign(m.output('y', 1), we.and(addr.any()).and(d.any()));
    expectError(() => m.build(), ["'mem'"], at);
  });
});

describe('drivers', () => {
  test('an undriven output, wire and register are named, at their declaration', () => {
    {
      const m = new ModuleBuilder('u', 'x');
      m.input('a', 1);
      m.allowUnused(m.input('b', 1), 'test');
      const at = here(); m.output('y', 1);
      m.assign(m.output('z', 1), lit(1, 0));
      expectError(() => m.build(), ["output 'y' of u is never driven"], at);
    }
    {
      const m = new ModuleBuilder('u', 'x');
      const at = here(); const w = m.wire('w', 4);
      m.assign(m.output('y', 4), w);
      expectError(() => m.build(), ["wire 'w' of u is never driven"], at);
    }
    {
      const m = new ModuleBuilder('u', 'x');
      m.clockDomain('sync', m.input('clk', 1), null);
      const at = here(); const r = m.reg('r', 4);
      m.assign(m.output('y', 4), r);
      expectError(() => m.build(), ["reg 'r' of u is never driven"], at);
    }
  });

  test('two assigns to one wire: both places are listed', () => {
    const m = new ModuleBuilder('md', 'x');
    const a = m.input('a', 1);
    const at = here(); const y = m.output('y', 1);
    const first = here(); m.assign(y, a);
    const second = here(); m.assign(y, a.not());
    const e = expectError(() => m.build(), ["output 'y' of md is driven in 2 places"], at);
    expect(e.message).toContain(`checks.test.ts:${first}:`);
    expect(e.message).toContain(`checks.test.ts:${second}:`);
  });

  test('an assign and a comb process', () => {
    const m = new ModuleBuilder('md', 'x');
    const a = m.input('a', 1);
    const at = here(); const w = m.wire('w', 1);
    m.assign(w, a);
    m.comb(() => m.set(w, a.not()));
    m.assign(m.output('y', 1), w);
    expectError(() => m.build(), ["wire 'w' of md is driven in 2 places", 'comb process at'], at);
  });

  test('two sync processes setting one register', () => {
    const m = new ModuleBuilder('md', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const a = m.input('a', 1);
    const at = here(); const r = m.reg('r', 1);
    m.sync(() => m.set(r, a));
    m.sync(() => m.set(r, a.not()));
    m.assign(m.output('y', 1), r);
    expectError(() => m.build(), ["reg 'r' of md is driven in 2 places", 'sync process at'], at);
  });

  test('an instance output and an assign', () => {
    const child = inverter();
    const m = new ModuleBuilder('md', 'x');
    const a = m.input('a', 4);
    const at = here(); const w = m.wire('w', 4);
    m.instance(child, 'u_inv', { a, y: w });
    m.assign(w, a);
    m.assign(m.output('y', 4), w);
    expectError(() => m.build(), ["wire 'w' of md is driven in 2 places", "instance 'u_inv' (inverter.y)"], at);
  });

  test('setting the same target twice in one process is one driver (the last set wins)', () => {
    const m = new ModuleBuilder('ok', 'x');
    const a = m.input('a', 1);
    const y = m.output('y', 1);
    m.comb(() => {
      m.set(y, 0);
      m.when(a, () => m.set(y, 1));
    });
    expect(() => m.build()).not.toThrow();
  });

  test('an input cannot be driven; registers only in sync(), wires and outputs only in comb()', () => {
    const m = new ModuleBuilder('d', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const a = m.input('a', 1);
    const w = m.wire('w', 1);
    const r = m.reg('r', 1);
    let at = here(); expectError(() => m.assign(a, 0), ["input 'a' cannot be driven"], at);
    at = here(); expectError(() => m.assign(r, 0), ["register 'r' is set in sync(), not comb()"], at);
    m.sync(() => {
      const at2 = here(); expectError(() => m.set(w, 0), ["'w' is a wire: use comb()"], at2);
    });
  });
});

describe('latches', () => {
  test('a comb target not set on every path of a when()', () => {
    const m = new ModuleBuilder('l', 'x');
    const c = m.input('c', 1);
    const a = m.input('a', 4);
    const y = m.output('y', 4);
    const at = here(); m.comb(() => m.when(c, () => m.set(y, a)));
    expectError(() => m.build(), ["'y' is not set on every path of the comb process", 'it would be a latch'], at);
  });

  test('a comb target set in only one arm of a when/else', () => {
    const m = new ModuleBuilder('l', 'x');
    const c = m.input('c', 1);
    const a = m.input('a', 4);
    const y = m.output('y', 4);
    const z = m.output('z', 4);
    const at = here(); m.comb(() => {
      m.when(
        c,
        () => {
          m.set(y, a);
          m.set(z, a);
        },
        () => m.set(y, a.not()),
      );
    });
    expectError(() => m.build(), ["'z' is not set on every path", 'latch'], at);
  });

  test('a switch without default that does not cover every value', () => {
    const m = new ModuleBuilder('l', 'x');
    const op = m.input('op', 2);
    const y = m.output('y', 1);
    const at = here(); m.comb(() => m.switch(op, [[[0, 1], () => m.set(y, 0)], [2, () => m.set(y, 1)]]));
    expectError(() => m.build(), ["'y' is not set on every path", 'latch'], at);
  });

  test('a target missing from one arm of a switch with default', () => {
    const m = new ModuleBuilder('l', 'x');
    const op = m.input('op', 1);
    const y = m.output('y', 1);
    const at = here(); m.comb(() => m.switch(op, [[0, () => m.set(y, 0)]], () => {}));
    expectError(() => m.build(), ["'y' is not set on every path", 'latch'], at);
  });

  test('a fully covering switch without default, a switch with default, a when/else and a default assignment are fine', () => {
    const m = new ModuleBuilder('ok', 'x');
    const op = m.input('op', 2);
    const c = m.input('c', 1);
    const y = m.output('y', 1);
    const z = m.output('z', 1);
    const w = m.output('w', 1);
    const v = m.output('v', 1);
    m.comb(() => {
      m.switch(op, [
        [[0, 3], () => m.set(y, 0)],
        [[1, 2], () => m.set(y, 1)],
      ]);
      m.switch(op, [[1, () => m.set(z, 1)]], () => m.set(z, 0));
      m.when(
        c,
        () => m.set(w, 1),
        () => m.set(w, 0),
      );
      m.set(v, 0);
      m.when(c, () => m.set(v, 1));
    });
    expect(() => m.build()).not.toThrow();
  });

  test('sync processes may leave registers unset (they hold)', () => {
    const m = new ModuleBuilder('ok', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const c = m.input('c', 1);
    const r = m.reg('r', 1);
    m.sync(() => m.when(c, () => m.set(r, r.not())));
    m.assign(m.output('y', 1), r);
    expect(() => m.build()).not.toThrow();
  });
});

describe('combinational loops', () => {
  test('a direct loop a -> b -> a through two assigns', () => {
    const m = new ModuleBuilder('cl', 'x');
    const x = m.input('x', 1);
    const a = m.wire('a', 1);
    const b = m.wire('b', 1);
    m.assign(a, b.xor(x));
    m.assign(b, a.not());
    m.assign(m.output('y', 1), b);
    const e = expectError(() => m.build(), ['combinational loop in cl', /\ba -> b -> a\b|\bb -> a -> b\b/]);
    expect(e.location?.line).toBeGreaterThan(0);
  });

  test('a loop through a comb process and an assign', () => {
    const m = new ModuleBuilder('cl', 'x');
    const c = m.input('c', 1);
    const a = m.wire('a', 4);
    const b = m.wire('b', 4);
    m.comb(() => m.when(c, () => m.set(b, a), () => m.set(b, lit(4, 0))));
    m.assign(a, b.add(1));
    m.assign(m.output('y', 4), a);
    expectError(() => m.build(), ['combinational loop in cl', "a", "b"]);
  });

  test('a loop inside one comb process (a target read before it is set)', () => {
    // always @* begin a = ~b & x; b = a; end: b depends on itself (Verilator: UNOPTFLAT).
    const m = new ModuleBuilder('cl', 'x');
    const x = m.input('x', 1);
    const a = m.wire('a', 1);
    const b = m.wire('b', 1);
    m.comb(() => {
      m.set(a, b.not().and(x));
      m.set(b, a);
    });
    m.assign(m.output('y', 1), b.xor(a));
    expectError(() => m.build(), ['combinational loop in cl']);
  });

  test('reading a target after setting it in the same process is not a loop', () => {
    const m = new ModuleBuilder('ok', 'x');
    const x = m.input('x', 4);
    const a = m.wire('a', 4);
    const b = m.wire('b', 4);
    m.comb(() => {
      m.set(a, x.not());
      m.set(b, a.xor(x));
    });
    m.assign(m.output('y', 4), b);
    expect(() => m.build()).not.toThrow();
  });

  test('a loop through an instance whose output depends combinationally on its input', () => {
    const child = inverter();
    expect([...child.combPaths.get('y')!]).toEqual(['a']);
    const m = new ModuleBuilder('cl', 'x');
    const x = m.input('x', 4);
    const w1 = m.wire('w1', 4);
    const w2 = m.wire('w2', 4);
    m.instance(child, 'u_inv', { a: w1, y: w2 });
    m.assign(w1, w2.xor(x));
    m.assign(m.output('y', 4), w2);
    expectError(() => m.build(), ['combinational loop in cl', 'w1', 'w2']);
  });

  test('an instance output fed straight back into its own input is a loop', () => {
    const m = new ModuleBuilder('cl', 'x');
    const w = m.wire('w', 4);
    m.instance(inverter(), 'u_inv', { a: w, y: w });
    m.assign(m.output('y', 4), w);
    expectError(() => m.build(), ['combinational loop in cl', 'w -> w']);
  });

  test('a path through a register is not a loop (in the module and through an instance)', () => {
    const m = new ModuleBuilder('ok', 'x');
    const clk = m.input('clk', 1);
    m.clockDomain('sync', clk, null);
    const x = m.input('x', 1);
    const r = m.reg('r', 1);
    const a = m.wire('a', 1);
    m.sync(() => m.set(r, a));
    m.assign(a, r.xor(x));
    // mixed_child: y depends on a combinationally, on b only through its register.
    const child = mixedChild();
    expect([...child.combPaths.get('y')!]).toEqual(['a']);
    const w = m.wire('w', 1);
    m.instance(child, 'u_child', { clk, a: x, b: w, y: w });
    m.assign(m.output('y', 1), a.and(w));
    const built = m.build();
    expect([...built.combPaths.get('y')!]).toEqual(['x']);
  });

  test('the input an instance output depends on does make a loop', () => {
    const m = new ModuleBuilder('cl', 'x');
    const clk = m.input('clk', 1);
    const x = m.input('x', 1);
    const w = m.wire('w', 1);
    m.instance(mixedChild(), 'u_child', { clk, a: w, b: x, y: w });
    m.assign(m.output('y', 1), w);
    expectError(() => m.build(), ['combinational loop in cl', 'w -> w']);
  });
});

describe('unread bits', () => {
  test('unread input bits are named with the bit range', () => {
    const m = new ModuleBuilder('ur', 'x');
    const at = here(); const a = m.input('a', 8);
    m.assign(m.output('y', 4), a.slice(3, 0));
    expectError(() => m.build(), ["input 'a' of ur has unread bits [7:4]", 'allowUnused(a, reason)'], at);
  });

  test('several ranges and single bits', () => {
    const m = new ModuleBuilder('ur', 'x');
    const at = here(); const a = m.input('a', 8);
    m.assign(m.output('y', 4), cat(a.slice(5, 4), a.bit(2), a.bit(0)));
    expectError(() => m.build(), ['unread bits [1], [3], [7:6]'], at);
  });

  test('a wire and a register never read', () => {
    {
      const m = new ModuleBuilder('ur', 'x');
      const a = m.input('a', 2);
      const at = here(); const w = m.let('w', a.not());
      m.assign(m.output('y', 2), a);
      void w;
      expectError(() => m.build(), ["wire 'w' of ur has unread bits [1:0]"], at);
    }
    {
      const m = new ModuleBuilder('ur', 'x');
      m.clockDomain('sync', m.input('clk', 1), null);
      const a = m.input('a', 1);
      const at = here(); const r = m.reg('r', 1);
      m.sync(() => m.set(r, a));
      m.assign(m.output('y', 1), a);
      expectError(() => m.build(), ["reg 'r' of ur has unread bits [0]"], at);
    }
  });

  test('a reset input with no reset register to use it is unread', () => {
    const m = new ModuleBuilder('ur', 'x');
    const at = here(); const rst = m.input('rst', 1);
    m.clockDomain('sync', m.input('clk', 1), rst);
    const a = m.input('a', 1);
    const r = m.reg('r', 1);
    m.sync(() => m.set(r, a));
    m.assign(m.output('y', 1), r);
    expectError(() => m.build(), ["input 'rst' of ur has unread bits [0]"], at);
  });

  test('a clock domain with no register and no memory write leaves its clock unread', () => {
    // The emitter writes no always @(posedge clk) for it: Verilator -Wall "Signal is not used: 'clk'".
    const m = new ModuleBuilder('ur', 'x');
    const at = here(); const clk = m.input('clk', 1);
    m.clockDomain('sync', clk, null);
    const a = m.input('a', 1);
    m.assign(m.output('y', 1), a);
    expectError(() => m.build(), ["input 'clk' of ur has unread bits [0]"], at);
  });

  test('allowUnused waives them and records the reason', () => {
    const m = new ModuleBuilder('ur', 'x');
    const a = m.input('a', 8);
    m.allowUnused(a, 'upper half reserved');
    m.assign(m.output('y', 4), a.slice(3, 0));
    expect([...m.build().unused]).toEqual([['a', 'upper half reserved']]);
  });

  test('allowUnused of a signal the module does not have', () => {
    const other = new ModuleBuilder('other', 'x');
    const stray = other.input('stray', 1);
    const m = new ModuleBuilder('ur', 'x');
    const a = m.input('a', 1);
    m.assign(m.output('y', 1), a);
    m.allowUnused(stray, 'not mine');
    const at = here(); expectError(() => m.build(), ["allowUnused: ur has no signal 'stray'"], at);
  });

  test('bits read only through a mux arm, a repeat, a memory address or an instance input count as read', () => {
    const m = new ModuleBuilder('ok', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const s = m.input('s', 1);
    const a = m.input('a', 4);
    const b = m.input('b', 4);
    const addr = m.input('addr', 2);
    const inst = m.input('inst', 4);
    const mem = m.memory('mem', 4, 4);
    m.memoryWrite(mem, s, addr, b);
    m.assign(m.output('y', 8), mux(s, a.repeat(2), cat(b, mem.read(addr))));
    m.instance(inverter(), 'u_inv', { a: inst, y: m.output('z', 4) });
    expect(() => m.build()).not.toThrow();
  });
});

describe('misuse of the builder', () => {
  test('set / when / switch outside a process, assign inside one, nested processes', () => {
    const m = new ModuleBuilder('mu', 'x');
    const a = m.input('a', 1);
    const y = m.output('y', 1);
    let at = here(); expectError(() => m.set(y, a), ["set('y') outside comb()/sync()"], at);
    at = here(); expectError(() => m.when(a, () => {}), ['when() outside comb()/sync()'], at);
    at = here(); expectError(() => m.switch(a, []), ['switch() outside comb()/sync()'], at);
    m.comb(() => {
      const at2 = here(); expectError(() => m.assign(y, a), ['assign() inside a process: use set()'], at2);
      const at3 = here(); expectError(() => m.comb(() => {}), ['processes do not nest'], at3);
      m.set(y, a);
    });
    expect(() => m.build()).not.toThrow();
  });

  test('a register without a clock domain', () => {
    const m = new ModuleBuilder('mu', 'x');
    const at = here(); expectError(() => m.reg('count', 8), ["register 'count' needs a clock domain"], at);
  });

  test('a reset value in a domain without a reset', () => {
    const m = new ModuleBuilder('mu', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    const at = here(); expectError(() => m.reg('count', 8, { reset: 0 }), ["register 'count' has a reset value but domain 'sync' has no reset"], at);
  });

  test('a clock or reset wider than 1 bit', () => {
    const m = new ModuleBuilder('mu', 'x');
    const at = here(); expectError(() => m.clockDomain('fast', m.input('clk', 2), null), ["domain 'fast' must be 1 bit"], at);
  });

  test('setting a signal of another module', () => {
    const other = new ModuleBuilder('other', 'x');
    const y = other.output('y', 1);
    const m = new ModuleBuilder('mu', 'x');
    const at = here(); expectError(() => m.assign(y, lit(1, 0)), ["'y' does not belong to module mu"], at);
  });

  test('reading a signal of another module', () => {
    const other = new ModuleBuilder('other', 'x');
    const stray = other.input('stray', 1);
    const m = new ModuleBuilder('mu', 'x');
    const a = m.input('a', 1);
    m.assign(m.output('y', 1), a.and(stray));
    // Emitted as is, the Verilog would read an undeclared name (a `default_nettype none error).
    expectError(() => m.build(), ["'stray'"]);
  });

  test('a module is built once', () => {
    const m = new ModuleBuilder('mu', 'x');
    m.assign(m.output('y', 1), lit(1, 0));
    m.build();
    const at = here(); expectError(() => m.input('late', 1), ['module mu is already built'], at);
    expectError(() => m.build(), ['module mu is already built']);
  });
});

describe('names', () => {
  test('a duplicate signal name', () => {
    const m = new ModuleBuilder('dn', 'x');
    m.input('a', 1);
    const at = here(); expectError(() => m.wire('a', 2), ["'a' is already declared in module dn"], at);
  });

  test("a name colliding with a register's _reg / _next, declared before or after the register", () => {
    const m = new ModuleBuilder('dn', 'x');
    m.clockDomain('sync', m.input('clk', 1), null);
    m.reg('count', 4);
    let at = here(); expectError(() => m.wire('count_reg', 4), ["'count_reg' is already declared in module dn"], at);
    at = here(); expectError(() => m.output('count_next', 4), ["'count_next' is already declared in module dn"], at);
    m.wire('level_next', 1);
    at = here(); expectError(() => m.reg('level', 1), ["'level_next' is already declared in module dn"], at);
  });

  test('a memory named like a signal', () => {
    const m = new ModuleBuilder('dn', 'x');
    m.input('mem', 1);
    const at = here(); expectError(() => m.memory('mem', 8, 4), ["'mem' is already declared in module dn"], at);
  });

  test('an instance named like a signal, or like another instance', () => {
    const child = inverter();
    const m = new ModuleBuilder('dn', 'x');
    const a = m.input('a', 4);
    const u = m.wire('u', 4);
    const v = m.wire('v', 4);
    m.assign(m.output('y', 4), u.xor(v));
    // Verilator: "Instance has the same name as variable: 'u'".
    let at = here(); expectError(() => m.instance(child, 'u', { a, y: u }), ["'u'"], at);
    m.instance(child, 'u_inv', { a, y: v });
    at = here(); expectError(() => m.instance(child, 'u_inv', { a, y: u }), ["'u_inv'"], at);
  });

  test('a constant() named like a signal', () => {
    const m = new ModuleBuilder('dn', 'x');
    m.input('a', 8);
    const at = here(); expectError(() => m.constant('a', 8, 1), ["'a'"], at);
  });

  test.each(['1abc', 'a-b', 'a b', '', 'a.b', 'módulo', '_t0', '_x', '__y'])('invalid identifier %j', (name) => {
    const m = new ModuleBuilder('dn', 'x');
    const at = here(); expectError(() => m.wire(name, 1), [`'${name}' is not a usable Verilog identifier`], at);
  });

  test.each(['module', 'wire', 'reg', 'input', 'output', 'always', 'begin', 'end', 'assign', 'case'])('keyword %s', (name) => {
    const m = new ModuleBuilder('dn', 'x');
    const at = here(); expectError(() => m.input(name, 1), [`'${name}' is not a usable Verilog identifier`], at);
  });

  test('invalid module, memory, instance and constant names', () => {
    let at = here(); expectError(() => new ModuleBuilder('_top', 'x'), ["'_top' is not a usable Verilog identifier"], at);
    at = here(); expectError(() => new ModuleBuilder('endmodule', 'x'), ["'endmodule'"], at);
    const m = new ModuleBuilder('dn', 'x');
    at = here(); expectError(() => m.memory('_mem', 8, 4), ["'_mem' is not a usable Verilog identifier"], at);
    at = here(); expectError(() => m.constant('9K', 8, 1), ["'9K' is not a usable Verilog identifier"], at);
    const a = m.input('a', 4);
    at = here(); expectError(() => m.instance(inverter(), '_u', { a, y: m.wire('w', 4) }), ["'_u' is not a usable Verilog identifier"], at);
  });

  test('invalid widths', () => {
    const m = new ModuleBuilder('dn', 'x');
    let at = here(); expectError(() => m.input('a', 0), ['width must be an integer from 1 to 65536, got 0'], at);
    at = here(); expectError(() => m.wire('b', 1.5), ['got 1.5'], at);
    at = here(); expectError(() => m.memory('c', 8, 1), ["memory 'c' depth must be an integer ≥ 2"], at);
  });
});

describe('instances', () => {
  test('a port connected with the wrong width names the instance, the port and both widths', () => {
    const m = new ModuleBuilder('it', 'x');
    const a = m.input('a', 8);
    const y = m.wire('y', 4);
    const at = here(); expectError(() => m.instance(inverter(), 'u_inv', { a, y }), ["instance 'u_inv' of inverter: port 'a' is 4 bits, connected to 8"], at);
  });

  test('a missing port', () => {
    const m = new ModuleBuilder('it', 'x');
    const a = m.input('a', 4);
    const at = here(); expectError(() => m.instance(inverter(), 'u_inv', { a }), ["instance 'u_inv' of inverter: port 'y' is not connected"], at);
  });

  test('a port the child does not have', () => {
    const m = new ModuleBuilder('it', 'x');
    const a = m.input('a', 4);
    const at = here(); expectError(() => m.instance(inverter(), 'u_inv', { a, y: m.wire('y', 4), z: a }), ["instance 'u_inv': inverter has no port 'z'"], at);
  });

  test('an output port must drive a wire or output of the parent', () => {
    const m = new ModuleBuilder('it', 'x');
    const a = m.input('a', 4);
    const b = m.input('b', 4);
    let at = here(); expectError(() => m.instance(inverter(), 'u_inv', { a, y: b }), ["output 'y' must drive a wire or output of it"], at);
    at = here(); expectError(() => m.instance(inverter(), 'u_inv', { a, y: a.not() }), ["output 'y' must drive a wire or output of it"], at);
  });
});
