import type { Expr, Module, Signal, Stmt } from '../../hdl-gen/index';

/**
 * A small cycle-level evaluator of hdl-gen's IR, for checking a block's logic in TypeScript
 * without a Verilog simulator: continuous assigns and sync processes (what the CRC block uses);
 * comb processes, memories and instances are out of scope and throw.
 */
export class IrEval {
  private readonly byName = new Map<string, Signal>();
  private readonly drivers = new Map<Signal, Expr>();
  private readonly regs: Signal[];
  private readonly state = new Map<Signal, bigint>();
  private readonly inputs = new Map<Signal, bigint>();
  private cache = new Map<Expr, bigint>();

  constructor(private readonly m: Module) {
    if (m.memories.length || m.instances.length) throw new Error('IrEval: memories and instances are not supported');
    for (const s of [...m.ports, ...m.signals]) this.byName.set(s.name, s);
    for (const p of m.processes) {
      if (p.kind === 'comb' && !p.continuous) throw new Error('IrEval: comb processes are not supported');
      if (p.continuous) {
        const s = p.body[0] as Extract<Stmt, { kind: 'set' }>;
        this.drivers.set(s.target, s.value);
      }
    }
    this.regs = m.signals.filter((s) => s.role === 'reg');
    this.reset();
  }

  signal(name: string): Signal {
    const s = this.byName.get(name);
    if (!s) throw new Error(`IrEval: ${this.m.name} has no signal '${name}'`);
    return s;
  }

  /** Registers to their reset values (0 where there is none). */
  reset(): void {
    for (const r of this.regs) this.state.set(r, r.resetValue ?? 0n);
    this.cache = new Map();
  }

  setInput(name: string, value: bigint | number): void {
    const s = this.signal(name);
    if (s.role !== 'input') throw new Error(`IrEval: '${name}' is not an input`);
    const v = BigInt(value);
    if (v < 0n || v >> BigInt(s.width)) throw new Error(`IrEval: ${v} does not fit '${name}'`);
    this.inputs.set(s, v);
    this.cache = new Map();
  }

  setReg(name: string, value: bigint | number): void {
    this.state.set(this.signal(name), BigInt(value));
    this.cache = new Map();
  }

  /** The current value of any signal (registers: their current value). */
  get(name: string): bigint {
    return this.read(this.signal(name));
  }

  /** One rising clock edge: every register takes the value its sync process computes. */
  step(): void {
    const next = new Map(this.state);
    for (const p of this.m.processes) if (p.kind === 'sync') this.exec(p.body, next);
    for (const r of this.regs) this.state.set(r, next.get(r)!);
    this.cache = new Map();
  }

  private exec(stmts: readonly Stmt[], next: Map<Signal, bigint>): void {
    for (const s of stmts) {
      if (s.kind === 'set') next.set(s.target, this.eval(s.value));
      else if (s.kind === 'if') this.exec(this.eval(s.cond) ? s.then : s.otherwise, next);
      else {
        const v = this.eval(s.subject);
        const hit = s.cases.find((c) => c.values.includes(v));
        if (hit) this.exec(hit.body, next);
        else if (s.otherwise) this.exec(s.otherwise, next);
      }
    }
  }

  private read(s: Signal): bigint {
    if (s.role === 'reg') return this.state.get(s)!;
    if (s.role === 'input') {
      const v = this.inputs.get(s);
      if (v === undefined) throw new Error(`IrEval: input '${s.name}' is not set`);
      return v;
    }
    const d = this.drivers.get(s);
    if (!d) throw new Error(`IrEval: '${s.name}' has no continuous driver`);
    return this.eval(d);
  }

  eval(e: Expr): bigint {
    const hit = this.cache.get(e);
    if (hit !== undefined) return hit;
    const v = this.compute(e);
    this.cache.set(e, v);
    return v;
  }

  private compute(e: Expr): bigint {
    const n = e.node;
    const mask = (1n << BigInt(n.width)) - 1n;
    switch (n.kind) {
      case 'const':
      case 'param':
        return n.value;
      case 'ref':
        return this.read(n.signal as Signal);
      case 'unary': {
        const a = this.eval(n.a);
        const am = (1n << BigInt(n.a.width)) - 1n;
        if (n.op === '~') return ~a & mask;
        if (n.op === '&') return a === am ? 1n : 0n;
        if (n.op === '|') return a !== 0n ? 1n : 0n;
        return parity(a);
      }
      case 'binary': {
        const a = this.eval(n.a);
        const b = this.eval(n.b);
        switch (n.op) {
          case '&':
            return a & b;
          case '|':
            return a | b;
          case '^':
            return a ^ b;
          case '+':
            return (a + b) & mask;
          case '-':
            return (a - b) & mask;
          case '==':
            return a === b ? 1n : 0n;
          case '!=':
            return a !== b ? 1n : 0n;
          case '<':
            return a < b ? 1n : 0n;
          case '<=':
            return a <= b ? 1n : 0n;
          case '>':
            return a > b ? 1n : 0n;
          case '>=':
            return a >= b ? 1n : 0n;
          case '<<':
            return (a << b) & mask;
          case '>>':
            return a >> b;
        }
        throw new Error('unreachable');
      }
      case 'slice':
        return (this.eval(n.a) >> BigInt(n.lo)) & mask;
      case 'concat':
        return n.parts.reduce((acc, p) => (acc << BigInt(p.width)) | this.eval(p), 0n);
      case 'repeat': {
        const a = this.eval(n.a);
        let r = 0n;
        for (let i = 0; i < n.times; i++) r = (r << BigInt(n.a.width)) | a;
        return r;
      }
      case 'mux':
        return this.eval(n.sel) ? this.eval(n.t) : this.eval(n.f);
      case 'memread':
        throw new Error('IrEval: memories are not supported');
    }
  }
}

export function parity(v: bigint): bigint {
  let p = 0;
  for (; v; v >>= 32n) {
    let x = Number(v & 0xffffffffn);
    x ^= x >>> 16;
    x ^= x >>> 8;
    x ^= x >>> 4;
    x ^= x >>> 2;
    x ^= x >>> 1;
    p ^= x & 1;
  }
  return BigInt(p);
}
