import { Expr, checkWidth, lit, type Value, toExpr } from './expr';
import { HdlError, callerLocation, type SourceLocation } from './location';
import { Signal, checkName, type Domain, type RecordInfo } from './signal';
import { elaborate } from './checks';

/**
 * Statements. A process is a list of them: `comb` processes drive wires and outputs (emitted as
 * `assign` or `always @*`), `sync` processes compute the next value of registers (emitted as the
 * `always @*` that sets `<name>_next`, registered by one `always @(posedge clk)` per domain, the
 * verilog-axis convention).
 */
export type Stmt =
  | { readonly kind: 'set'; readonly target: Signal; readonly value: Expr; readonly location: SourceLocation | null }
  | { readonly kind: 'if'; readonly cond: Expr; readonly then: readonly Stmt[]; readonly otherwise: readonly Stmt[] }
  | {
      readonly kind: 'switch';
      readonly subject: Expr;
      /**
       * Each case's values, and for each value the constant() it was given as (emitted as its
       * localparam name) or null (emitted as a literal).
       */
      readonly cases: readonly { readonly values: readonly bigint[]; readonly names: readonly (string | null)[]; readonly body: readonly Stmt[] }[];
      readonly otherwise: readonly Stmt[] | null;
    };

/** A switch case value: a number, a bigint, or a named constant of the module (`constant()`). */
export type CaseLabel = bigint | number | Expr;

export interface Process {
  readonly kind: 'comb' | 'sync';
  /** A single unconditional `set` of a wire/output: emitted as a continuous `assign`. */
  readonly continuous: boolean;
  readonly body: readonly Stmt[];
  readonly location: SourceLocation | null;
}

export interface Memory {
  readonly name: string;
  readonly width: number;
  readonly depth: number;
  readonly location: SourceLocation | null;
  /** Address bits: ⌈log2(depth)⌉. */
  readonly addrWidth: number;
  /** Combinational read (`mem[addr]`). */
  read(addr: Expr): Expr;
}

export interface MemoryWrite {
  readonly memory: Memory;
  readonly domain: Domain;
  readonly enable: Expr;
  readonly addr: Expr;
  readonly data: Expr;
}

export interface Instance {
  readonly name: string;
  readonly module: Module;
  /** Input ports: the expression driving them; output ports: the signal they drive. */
  readonly connections: ReadonlyMap<string, Expr>;
  readonly location: SourceLocation | null;
}

/** An elaborated module: immutable, checked, ready to emit. */
export interface Module {
  readonly name: string;
  readonly doc: string;
  /** Generator parameters, recorded in the emitted header. */
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly ports: readonly Signal[];
  readonly signals: readonly Signal[];
  readonly domains: readonly Domain[];
  readonly processes: readonly Process[];
  readonly memories: readonly Memory[];
  readonly memoryWrites: readonly MemoryWrite[];
  readonly instances: readonly Instance[];
  readonly localparams: ReadonlyMap<string, { readonly width: number; readonly value: bigint; readonly doc: string | null }>;
  /** For each output, the inputs it depends on combinationally (for loop checks through instances). */
  readonly combPaths: ReadonlyMap<string, ReadonlySet<string>>;
  /** Signals (inputs included) never read, with the reason they may stay unused; emitted as lint waivers. */
  readonly unused: ReadonlyMap<string, string>;
}

/**
 * Builds one module. Declarations return Signals; `comb`/`sync` open processes in which `set`,
 * `when` and `switch` add statements; `build()` runs the elaboration checks (width, undriven,
 * multiply driven, latches, combinational loops) and returns the immutable Module.
 */
export class ModuleBuilder {
  private readonly ports: Signal[] = [];
  private readonly signals: Signal[] = [];
  private readonly names = new Map<string, SourceLocation | null>();
  private readonly processes: Process[] = [];
  private readonly memories: Memory[] = [];
  private readonly memoryWrites: MemoryWrite[] = [];
  private readonly instances: Instance[] = [];
  private readonly domains: Domain[] = [];
  private readonly localparams = new Map<string, { width: number; value: bigint; doc: string | null }>();
  private readonly unusedOk = new Map<string, string>();
  private stack: Stmt[][] | null = null;
  private processKind: 'comb' | 'sync' | null = null;
  private built = false;

  constructor(
    readonly name: string,
    private readonly doc: string,
    private readonly params: Record<string, string | number | boolean> = {},
  ) {
    checkName(name);
  }

  // --- declarations ------------------------------------------------------------------------------

  private declare<T extends Signal>(s: T): T {
    this.assertOpen();
    if (this.names.has(s.name)) throw new HdlError(`'${s.name}' is already declared in module ${this.name}`);
    this.names.set(s.name, s.declared);
    if (s.role === 'reg') {
      // A register's emitted names must not collide either.
      for (const suffix of ['_reg', '_next']) {
        if (this.names.has(s.name + suffix)) throw new HdlError(`'${s.name + suffix}' is already declared in module ${this.name}`);
        this.names.set(s.name + suffix, s.declared);
      }
    }
    (s.role === 'input' || s.role === 'output' ? this.ports : this.signals).push(s);
    return s;
  }

  input(name: string, width: number, opts: { group?: string; doc?: string; record?: RecordInfo } = {}): Signal {
    return this.declare(new Signal({ name, width, role: 'input', group: opts.group ?? null, doc: opts.doc ?? null, record: opts.record ?? null }));
  }

  output(name: string, width: number, opts: { group?: string; doc?: string; record?: RecordInfo } = {}): Signal {
    return this.declare(new Signal({ name, width, role: 'output', group: opts.group ?? null, doc: opts.doc ?? null, record: opts.record ?? null }));
  }

  /**
   * A port of this module like `port` of `child` (same direction, width and doc), named `name`: a
   * port a wrapper passes straight through to an instance.
   */
  portLike(child: Module, port: string, name: string = port, group?: string): Signal {
    const p = child.ports.find((x) => x.name === port);
    if (!p) throw new HdlError(`${child.name} has no port '${port}'`);
    const opts = { group: group ?? p.group ?? undefined, ...(p.doc ? { doc: p.doc } : {}), ...(p.record ? { record: p.record } : {}) };
    return p.role === 'input' ? this.input(name, p.width, opts) : this.output(name, p.width, opts);
  }

  /**
   * A wire per port of `child` but its clock and reset (`clk`, `rst`), named `<prefix>_<port>` and
   * keyed by the port's name: the connections of an instance that the parent drives and reads.
   */
  wiresLike(child: Module, prefix: string): Record<string, Signal> {
    return Object.fromEntries(child.ports.filter((p) => p.name !== 'clk' && p.name !== 'rst').map((p) => [p.name, this.wire(`${prefix}_${p.name}`, p.width)]));
  }

  wire(name: string, width: number, opts: { doc?: string; record?: RecordInfo } = {}): Signal {
    return this.declare(new Signal({ name, width, role: 'wire', doc: opts.doc ?? null, record: opts.record ?? null }));
  }

  /** A wire driven by `value` right away (a named intermediate). */
  let(name: string, value: Expr, opts: { doc?: string; record?: RecordInfo } = {}): Signal {
    const w = this.wire(name, value.width, opts);
    this.assign(w, value);
    return w;
  }

  /** A register in `domain` (the first domain by default), reset to `reset` (null: no reset). */
  reg(name: string, width: number, opts: { reset?: bigint | number | null; domain?: Domain; doc?: string; record?: RecordInfo } = {}): Signal {
    const domain = opts.domain ?? this.domains[0];
    if (!domain) throw new HdlError(`register '${name}' needs a clock domain: call clockDomain() first`);
    const reset = opts.reset === undefined || opts.reset === null ? null : BigInt(opts.reset);
    if (reset !== null && (reset < 0n || reset >= 1n << BigInt(width))) {
      throw new HdlError(`reset value ${reset} of register '${name}' does not fit ${width} bits`);
    }
    if (reset !== null && domain.reset === null) throw new HdlError(`register '${name}' has a reset value but domain '${domain.name}' has no reset`);
    return this.declare(new Signal({ name, width, role: 'reg', resetValue: reset, domain, doc: opts.doc ?? null, record: opts.record ?? null }));
  }

  /** Declares a clock domain; the first one is the default for registers. */
  clockDomain(name: string, clock: Signal, reset: Signal | null): Domain {
    this.assertOpen();
    if (clock.width !== 1 || (reset && reset.width !== 1)) throw new HdlError(`clock and reset of domain '${name}' must be 1 bit`);
    const d: Domain = Object.freeze({ name, clock, reset });
    this.domains.push(d);
    return d;
  }

  /** A named constant, emitted as a localparam and read by its name. */
  constant(name: string, width: number, value: bigint | number, doc: string | null = null): Expr {
    this.assertOpen();
    checkName(name);
    const v = lit(width, value).node.kind === 'const' ? BigInt(value) : 0n;
    this.claim(name);
    this.localparams.set(name, { width, value: v, doc });
    return new Expr({ kind: 'param', width, name, value: v });
  }

  /** Reserves a name in the module's single namespace (signals, memories, instances, localparams). */
  private claim(name: string): void {
    if (this.names.has(name)) throw new HdlError(`'${name}' is already declared in module ${this.name}`);
    this.names.set(name, callerLocation());
  }

  memory(name: string, width: number, depth: number): Memory {
    this.assertOpen();
    checkName(name);
    checkWidth(width);
    if (!Number.isInteger(depth) || depth < 2) throw new HdlError(`memory '${name}' depth must be an integer ≥ 2`);
    this.claim(name);
    const location = callerLocation();
    const addrWidth = Math.max(1, Math.ceil(Math.log2(depth)));
    const mem: Memory = Object.freeze({
      name,
      width,
      depth,
      location,
      addrWidth,
      read: (addr: Expr) => {
        if (addr.width !== addrWidth) throw new HdlError(`memory '${name}' of depth ${depth} takes a ${addrWidth}-bit address, got ${addr.width} bits`);
        return new Expr({ kind: 'memread', width, memory: { name, width, location }, addr });
      },
    });
    this.memories.push(mem);
    return mem;
  }

  /** A synchronous write port: on the rising edge, if `enable`, mem[addr] <= data. */
  memoryWrite(mem: Memory, enable: Expr, addr: Expr, data: Expr, domain: Domain | undefined = this.domains[0]): void {
    if (!domain) throw new HdlError(`memory '${mem.name}' write needs a clock domain`);
    if (enable.width !== 1) throw new HdlError(`memory '${mem.name}' write enable must be 1 bit`);
    if (data.width !== mem.width) throw new HdlError(`memory '${mem.name}' is ${mem.width} bits wide, write data is ${data.width}`);
    if (addr.width !== mem.addrWidth) throw new HdlError(`memory '${mem.name}' takes a ${mem.addrWidth}-bit address, got ${addr.width} bits`);
    this.memoryWrites.push({ memory: mem, domain, enable, addr, data });
  }

  /** Instantiates `child`: inputs take expressions, outputs drive signals of this module. */
  instance(child: Module, name: string, connections: Record<string, Expr>): void {
    this.assertOpen();
    checkName(name);
    const conns = new Map<string, Expr>();
    for (const port of child.ports) {
      const e = connections[port.name];
      if (!e) throw new HdlError(`instance '${name}' of ${child.name}: port '${port.name}' is not connected`);
      if (e.width !== port.width) throw new HdlError(`instance '${name}' of ${child.name}: port '${port.name}' is ${port.width} bits, connected to ${e.width}`);
      if (port.role === 'output' && !(e instanceof Signal && (e.role === 'wire' || e.role === 'output'))) {
        throw new HdlError(`instance '${name}' of ${child.name}: output '${port.name}' must drive a wire or output of ${this.name}`);
      }
      conns.set(port.name, e);
    }
    for (const k of Object.keys(connections)) if (!child.ports.some((p) => p.name === k)) throw new HdlError(`instance '${name}': ${child.name} has no port '${k}'`);
    this.claim(name);
    this.instances.push({ name, module: child, connections: conns, location: callerLocation() });
  }

  /** `signal` is intentionally left unread (emitted with a lint waiver saying why). */
  allowUnused(signal: Signal, reason: string): void {
    this.unusedOk.set(signal.name, reason);
  }

  // --- processes and statements ---------------------------------------------------------------

  /** A continuous assignment of a wire or output. */
  assign(target: Signal, value: Value): void {
    this.assertOpen();
    if (this.stack) throw new HdlError('assign() inside a process: use set()');
    const v = toExpr(value, target.width, `'${target.name}'`);
    this.checkTarget(target, 'comb', v);
    this.processes.push({ kind: 'comb', continuous: true, body: [{ kind: 'set', target, value: v, location: callerLocation() }], location: callerLocation() });
  }

  /** A combinational process (`always @*`): every target must be set on every path. */
  comb(body: () => void): void {
    this.process('comb', body);
  }

  /** A register process: sets the next value of registers; unset registers hold their value. */
  sync(body: () => void): void {
    this.process('sync', body);
  }

  private process(kind: 'comb' | 'sync', body: () => void): void {
    this.assertOpen();
    if (this.stack) throw new HdlError('processes do not nest');
    const location = callerLocation();
    this.stack = [[]];
    this.processKind = kind;
    try {
      body();
    } finally {
      const stmts = this.stack[0]!;
      this.stack = null;
      this.processKind = null;
      this.processes.push({ kind, continuous: false, body: Object.freeze(stmts), location });
    }
  }

  set(target: Signal, value: Value): void {
    if (!this.stack || !this.processKind) throw new HdlError(`set('${target.name}') outside comb()/sync()`);
    const v = toExpr(value, target.width, `'${target.name}'`);
    this.checkTarget(target, this.processKind, v);
    this.stack[this.stack.length - 1]!.push({ kind: 'set', target, value: v, location: callerLocation() });
  }

  when(cond: Expr, then: () => void, otherwise?: () => void): void {
    if (!this.stack) throw new HdlError('when() outside comb()/sync()');
    if (cond.width !== 1) throw new HdlError(`when() condition must be 1 bit, got ${cond.width}`);
    const t = this.collect(then);
    const o = otherwise ? this.collect(otherwise) : [];
    this.stack[this.stack.length - 1]!.push({ kind: 'if', cond, then: t, otherwise: o });
  }

  /**
   * `case (subject)`: each case lists one or more values, as numbers, bigints or constants of this
   * module (`constant()`, emitted by name: `case (state) ST_IDLE: begin`). A value may appear once;
   * it must fit the subject, and a constant must be as wide as the subject.
   */
  switch(subject: Expr, cases: readonly (readonly [CaseLabel | readonly CaseLabel[], () => void])[], otherwise?: () => void): void {
    if (!this.stack) throw new HdlError('switch() outside comb()/sync()');
    const seen = new Set<bigint>();
    const cs = cases.map(([vals, body]) => {
      const labels = Array.isArray(vals) ? (vals as readonly CaseLabel[]) : [vals as CaseLabel];
      const names: (string | null)[] = [];
      const values = labels.map((v) => {
        let b: bigint;
        if (v instanceof Expr) {
          const n = v.node;
          if (n.kind !== 'param') throw new HdlError(`switch case labels are numbers or constant()s of ${this.name}, got a '${n.kind}' expression`);
          const declared = this.localparams.get(n.name);
          if (!declared || declared.value !== n.value || declared.width !== n.width) throw new HdlError(`switch case '${n.name}' is not a constant() of module ${this.name}`);
          if (n.width !== subject.width) throw new HdlError(`switch case '${n.name}' is ${n.width} bits, the subject is ${subject.width} bits`);
          b = n.value;
          names.push(n.name);
        } else {
          b = BigInt(v);
          lit(subject.width, b);
          names.push(null);
        }
        if (seen.has(b)) throw new HdlError(`switch case ${b}${names.at(-1) ? ` (${names.at(-1)})` : ''} appears twice`);
        seen.add(b);
        return b;
      });
      return { values, names, body: this.collect(body) };
    });
    this.stack[this.stack.length - 1]!.push({ kind: 'switch', subject, cases: cs, otherwise: otherwise ? this.collect(otherwise) : null });
  }

  private collect(body: () => void): readonly Stmt[] {
    this.stack!.push([]);
    body();
    return Object.freeze(this.stack!.pop()!);
  }

  private checkTarget(target: Signal, kind: 'comb' | 'sync', value: Expr): void {
    if (!this.names.has(target.name) || ![...this.ports, ...this.signals].includes(target)) {
      throw new HdlError(`'${target.name}' does not belong to module ${this.name}`);
    }
    if (target.role === 'input') throw new HdlError(`input '${target.name}' cannot be driven inside ${this.name}`);
    if (kind === 'sync' && target.role !== 'reg') throw new HdlError(`sync() sets registers; '${target.name}' is a ${target.role}: use comb()`);
    if (kind === 'comb' && target.role === 'reg') throw new HdlError(`register '${target.name}' is set in sync(), not comb()`);
    if (value.width !== target.width) {
      throw new HdlError(`width mismatch: '${target.name}' is ${target.width} bits, the value is ${value.width} bits`);
    }
  }

  private assertOpen(): void {
    if (this.built) throw new HdlError(`module ${this.name} is already built`);
  }

  /** Runs the elaboration checks and returns the immutable module. */
  build(): Module {
    this.assertOpen();
    this.built = true;
    return elaborate({
      name: this.name,
      doc: this.doc,
      params: Object.freeze({ ...this.params }),
      ports: Object.freeze([...this.ports]),
      signals: Object.freeze([...this.signals]),
      domains: Object.freeze([...this.domains]),
      processes: Object.freeze([...this.processes]),
      memories: Object.freeze([...this.memories]),
      memoryWrites: Object.freeze([...this.memoryWrites]),
      instances: Object.freeze([...this.instances]),
      localparams: this.localparams,
      unusedOk: this.unusedOk,
    });
  }
}
