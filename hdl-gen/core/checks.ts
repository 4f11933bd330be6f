import type { Expr } from './expr';
import { HdlError, formatLocation, type SourceLocation } from './location';
import type { Module, Stmt } from './module';
import { Signal } from './signal';
import { childrenOf, statementExprs } from './walk';

/** What ModuleBuilder hands over; `elaborate` checks it and returns the Module. */
export type RawModule = Omit<Module, 'combPaths' | 'unused'> & { readonly unusedOk: ReadonlyMap<string, string> };

/** Visits every signal an expression reads, with the bit range read ([lo, hi]). */
export function visitReads(e: Expr, f: (s: Signal, lo: number, hi: number) => void, lo = 0, hi = e.width - 1): void {
  const n = e.node;
  switch (n.kind) {
    case 'const':
      return;
    case 'ref':
      f(n.signal as Signal, lo, hi);
      return;
    case 'slice':
      visitReads(n.a, f, n.lo + lo, n.lo + hi);
      return;
    case 'unary':
      visitReads(n.a, f);
      return;
    case 'binary':
      visitReads(n.a, f);
      visitReads(n.b, f);
      return;
    case 'concat': {
      // Parts are most significant first: map the requested range onto each part.
      let top = e.width;
      for (const p of n.parts) {
        const pLo = top - p.width;
        const a = Math.max(lo, pLo);
        const b = Math.min(hi, top - 1);
        if (a <= b) visitReads(p, f, a - pLo, b - pLo);
        top = pLo;
      }
      return;
    }
    case 'repeat':
      visitReads(n.a, f);
      return;
    case 'mux':
      visitReads(n.sel, f);
      visitReads(n.t, f, lo, hi);
      visitReads(n.f, f, lo, hi);
      return;
    case 'memread':
      visitReads(n.addr, f);
      return;
    case 'param':
      return;
  }
}

/** Every memory an expression reads. */
function visitMemories(e: Expr, f: (name: string) => void): void {
  const n = e.node;
  if (n.kind === 'memread') f(n.memory.name);
  for (const c of childrenOf(e)) visitMemories(c, f);
}

/**
 * Combinational dependencies of one comb process, in statement order: a read of one of the
 * process's own targets after that target was set on the path is procedural (no dependency); a
 * read before that is the target's previous value, i.e. feedback.
 */
function processDeps(stmts: readonly Stmt[], targets: ReadonlySet<Signal>, assigned: Set<Signal>, add: (from: Signal) => void): Set<Signal> {
  const read = (e: Expr) =>
    visitReads(e, (s) => {
      if (!targets.has(s) || !assigned.has(s)) add(s);
    });
  let done = assigned;
  for (const s of stmts) {
    if (s.kind === 'set') {
      read(s.value);
      done = new Set(done).add(s.target);
    } else if (s.kind === 'if') {
      read(s.cond);
      const a = processDeps(s.then, targets, new Set(done), add);
      const b = processDeps(s.otherwise, targets, new Set(done), add);
      done = new Set([...a].filter((x) => b.has(x)));
    } else {
      read(s.subject);
      const arms = s.cases.map((c) => processDeps(c.body, targets, new Set(done), add));
      arms.push(s.otherwise ? processDeps(s.otherwise, targets, new Set(done), add) : new Set(done));
      done = new Set([...arms[0]!].filter((x) => arms.every((a) => a.has(x))));
    }
    assigned = done;
  }
  return done;
}

function targetsOf(stmts: readonly Stmt[], into = new Set<Signal>()): Set<Signal> {
  for (const s of stmts) {
    if (s.kind === 'set') into.add(s.target);
    else if (s.kind === 'if') {
      targetsOf(s.then, into);
      targetsOf(s.otherwise, into);
    } else {
      for (const c of s.cases) targetsOf(c.body, into);
      if (s.otherwise) targetsOf(s.otherwise, into);
    }
  }
  return into;
}

/** Signals set on every path through `stmts`. */
function definitelySet(stmts: readonly Stmt[]): Set<Signal> {
  const out = new Set<Signal>();
  for (const s of stmts) {
    if (s.kind === 'set') out.add(s.target);
    else if (s.kind === 'if') {
      const t = definitelySet(s.then);
      for (const x of definitelySet(s.otherwise)) if (t.has(x)) out.add(x);
    } else {
      const arms = s.cases.map((c) => definitelySet(c.body));
      const covered = s.otherwise !== null || (s.subject.width <= 16 && s.cases.reduce((k, c) => k + c.values.length, 0) === 2 ** s.subject.width);
      if (!covered) continue;
      if (s.otherwise) arms.push(definitelySet(s.otherwise));
      const first = arms[0];
      if (!first) continue;
      for (const x of first) if (arms.every((a) => a.has(x))) out.add(x);
    }
  }
  return out;
}

const where = (loc: SourceLocation | null) => formatLocation(loc);

export function elaborate(raw: RawModule): Module {
  const all = [...raw.ports, ...raw.signals];

  // Every signal and memory read belongs to this module.
  const own = new Set<Signal>(all);
  const ownMemories = new Set(raw.memories.map((m) => m.name));
  const allExprs: Expr[] = [];
  for (const p of raw.processes) allExprs.push(...statementExprs(p.body));
  for (const w of raw.memoryWrites) allExprs.push(w.enable, w.addr, w.data);
  for (const inst of raw.instances) allExprs.push(...inst.connections.values());
  const readMemories = new Set<string>();
  for (const e of allExprs) {
    visitReads(e, (s) => {
      if (!own.has(s)) throw new HdlError(`${raw.name} reads '${s.name}', which belongs to another module`, e.location);
    });
    visitMemories(e, (name) => {
      if (!ownMemories.has(name)) throw new HdlError(`${raw.name} reads memory '${name}', which belongs to another module`, e.location);
      readMemories.add(name);
    });
  }
  for (const mem of raw.memories) {
    if (!readMemories.has(mem.name)) throw new HdlError(`memory '${mem.name}' of ${raw.name} is never read`, mem.location);
  }

  // Drivers: every wire and output exactly one (a comb process or an instance output), every
  // register exactly one sync process, no input driven.
  // A driver is described only for the error message: reading a location resolves a stack trace.
  const drivers = new Map<Signal, (() => string)[]>();
  const addDriver = (s: Signal, by: () => string) => drivers.set(s, [...(drivers.get(s) ?? []), by]);
  for (const p of raw.processes) {
    for (const t of targetsOf(p.body)) addDriver(t, () => `${p.kind} process at ${where(p.location)}`);
    if (p.kind === 'comb' && !p.continuous) {
      const sure = definitelySet(p.body);
      for (const t of targetsOf(p.body)) {
        if (!sure.has(t)) throw new HdlError(`'${t.name}' is not set on every path of the comb process at ${where(p.location)}: it would be a latch`, p.location);
      }
    }
  }
  for (const inst of raw.instances) {
    for (const port of inst.module.ports) {
      if (port.role === 'output') addDriver(inst.connections.get(port.name) as Signal, () => `instance '${inst.name}' (${inst.module.name}.${port.name}) at ${where(inst.location)}`);
    }
  }
  for (const s of all) {
    if (s.role === 'input') continue;
    const d = drivers.get(s) ?? [];
    if (d.length === 0) throw new HdlError(`${s.role} '${s.name}' of ${raw.name} is never driven`, s.declared);
    if (d.length > 1) throw new HdlError(`${s.role} '${s.name}' of ${raw.name} is driven in ${d.length} places: ${d.map((by) => by()).join('; ')}`, s.declared);
  }

  // Combinational dependencies: target ← every signal its comb process reads (registers are
  // read as <name>_reg: they break paths), and child outputs ← child inputs that reach them.
  const deps = new Map<Signal, Set<Signal>>();
  const addDep = (to: Signal, from: Signal) => {
    if (from.role === 'reg') return;
    let set = deps.get(to);
    if (!set) deps.set(to, (set = new Set()));
    set.add(from);
  };
  for (const p of raw.processes) {
    if (p.kind !== 'comb') continue;
    const targets = targetsOf(p.body);
    processDeps(p.body, targets, new Set(), (s) => {
      for (const t of targets) addDep(t, s);
    });
  }
  for (const inst of raw.instances) {
    for (const [out, ins] of inst.module.combPaths) {
      const target = inst.connections.get(out) as Signal;
      for (const input of ins) visitReads(inst.connections.get(input)!, (s) => addDep(target, s));
    }
  }
  findLoop(raw.name, deps);

  const combPaths = new Map<string, ReadonlySet<string>>();
  for (const o of raw.ports.filter((p) => p.role === 'output')) {
    const seen = new Set<Signal>();
    const stack = [o];
    const inputs = new Set<string>();
    while (stack.length) {
      const s = stack.pop()!;
      for (const d of deps.get(s) ?? []) {
        if (seen.has(d)) continue;
        seen.add(d);
        if (d.role === 'input') inputs.add(d.name);
        else stack.push(d);
      }
    }
    combPaths.set(o.name, inputs);
  }

  // Every bit of every input, wire and register is read somewhere (or waived with a reason):
  // Verilator -Wall reports unused bits, and an unread bit is usually a mistake.
  const used = new Map<Signal, bigint>();
  const mark = (s: Signal, lo: number, hi: number) => used.set(s, (used.get(s) ?? 0n) | (((1n << BigInt(hi - lo + 1)) - 1n) << BigInt(lo)));
  for (const p of raw.processes) for (const e of statementExprs(p.body)) visitReads(e, mark);
  for (const w of raw.memoryWrites) for (const e of [w.enable, w.addr, w.data]) visitReads(e, mark);
  for (const inst of raw.instances) {
    for (const port of inst.module.ports) if (port.role === 'input') visitReads(inst.connections.get(port.name)!, mark);
  }
  for (const d of raw.domains) {
    // A clock is used only if something is clocked by it.
    const clocked = all.some((s) => s.role === 'reg' && s.domain === d) || raw.memoryWrites.some((w) => w.domain === d);
    if (clocked) mark(d.clock, 0, 0);
    if (d.reset && all.some((s) => s.role === 'reg' && s.domain === d && s.resetValue !== null)) mark(d.reset, 0, 0);
  }
  const unused = new Map<string, string>();
  for (const s of all) {
    if (s.role === 'output') continue;
    const full = (1n << BigInt(s.width)) - 1n;
    const got = used.get(s) ?? 0n;
    if (got === full) continue;
    const reason = raw.unusedOk.get(s.name);
    if (reason === undefined) {
      const bits = unusedBits(full & ~got, s.width);
      throw new HdlError(`${s.role} '${s.name}' of ${raw.name} has unread bits ${bits}: use them or allowUnused(${s.name}, reason)`, s.declared);
    }
    unused.set(s.name, reason);
  }
  for (const name of raw.unusedOk.keys()) {
    if (!all.some((s) => s.name === name)) throw new HdlError(`allowUnused: ${raw.name} has no signal '${name}'`);
  }

  return Object.freeze({
    name: raw.name,
    doc: raw.doc,
    params: raw.params,
    ports: raw.ports,
    signals: raw.signals,
    domains: raw.domains,
    processes: raw.processes,
    memories: raw.memories,
    memoryWrites: raw.memoryWrites,
    instances: raw.instances,
    localparams: new Map(raw.localparams),
    combPaths,
    unused,
  });
}

function unusedBits(mask: bigint, width: number): string {
  const ranges: string[] = [];
  for (let i = 0; i < width; ) {
    if (!((mask >> BigInt(i)) & 1n)) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < width && (mask >> BigInt(j + 1)) & 1n) j++;
    ranges.push(i === j ? `[${i}]` : `[${j}:${i}]`);
    i = j + 1;
  }
  return ranges.join(', ');
}

/** Throws on a combinational loop, naming the signals around it. */
function findLoop(module: string, deps: ReadonlyMap<Signal, ReadonlySet<Signal>>): void {
  const state = new Map<Signal, 1 | 2>(); // 1 on the stack, 2 done
  const path: Signal[] = [];
  const visit = (s: Signal): void => {
    state.set(s, 1);
    path.push(s);
    for (const d of deps.get(s) ?? []) {
      const st = state.get(d);
      if (st === 1) {
        const cycle = [...path.slice(path.indexOf(d)), d].map((x) => x.name).reverse();
        throw new HdlError(`combinational loop in ${module}: ${cycle.join(' -> ')}`, d.declared);
      }
      if (st === undefined) visit(d);
    }
    path.pop();
    state.set(s, 2);
  };
  for (const s of [...deps.keys()].sort((a, b) => a.name.localeCompare(b.name))) if (!state.has(s)) visit(s);
}
