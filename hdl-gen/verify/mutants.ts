import { Expr, lit, type BinaryOp, type ExprNode } from '../core/expr';
import { formatLocation, type SourceLocation } from '../core/location';
import type { Module, Process, Stmt } from '../core/module';
import { Signal } from '../core/signal';
import { childrenOf } from '../core/walk';

/**
 * Mutants of a generated module, made on the IR (not the Verilog text), so each one is a real
 * change of one node: a constant with a bit flipped, an operator swapped, a term dropped, a
 * datapath signal stuck at 0 or 1 in one bit, a condition inverted. A campaign (scripts/mutants.ts)
 * builds a module with many mutants at once, each behind `mutant_id == k` (mutant schemata: one
 * Verilator build per module, the live mutant chosen at run time by a plusarg), and writes any
 * single mutant as plain Verilog for a replay with `--rtl`.
 */
export type MutationKind = 'constant' | 'operator' | 'dropped-term' | 'stuck-at' | 'condition';
export const MUTATION_KINDS: readonly MutationKind[] = ['constant', 'operator', 'dropped-term', 'stuck-at', 'condition'];

/** Where a mutation applies: an expression node, or a statement (an `if` condition, a `set`). */
export type MutationSite = { readonly kind: MutationKind; readonly expr: Expr } | { readonly kind: MutationKind; readonly stmt: Stmt };

export interface Mutation {
  readonly kind: MutationKind;
  /** What changes, and the generator line that made the node. */
  readonly what: string;
  readonly site: MutationSite;
  /** The mutated value, given the node (or statement value/condition) with its operands rewritten. */
  readonly apply: (rewritten: Expr) => Expr;
}

/** Operators and what each becomes. */
const SWAP: Partial<Record<BinaryOp, BinaryOp>> = {
  '&': '|', '|': '&', '^': '|', '+': '-', '-': '+', '==': '!=', '!=': '==', '<': '<=', '<=': '<', '>': '>=', '>=': '>', '<<': '>>', '>>': '<<',
};
const DROPPABLE: ReadonlySet<BinaryOp> = new Set(['&', '|', '^', '+', '-']);

/**
 * Datapath signals a stuck-at targets: write data, byte strobes, addresses, lengths, MSN, STag,
 * CRC (the fields a placement or an FPDU carries).
 */
export const DATAPATH_SIGNAL = /(^|_)(data|strb|addr|len|length|msn|stag|crc|to|mo)(_|$)/;

/** Every mutation site of `m`, in a fixed order (processes, statements, then operands depth first). */
export function mutationSites(m: Module): MutationSite[] {
  const sites: MutationSite[] = [];
  const seen = new Set<Expr>();
  const visit = (e: Expr): void => {
    if (seen.has(e)) return;
    seen.add(e);
    for (const c of childrenOf(e)) visit(c);
    const n = e.node;
    if (n.kind === 'const' || n.kind === 'param') sites.push({ kind: 'constant', expr: e });
    else if (n.kind === 'binary') {
      if (SWAP[n.op]) sites.push({ kind: 'operator', expr: e });
      if (DROPPABLE.has(n.op)) sites.push({ kind: 'dropped-term', expr: e });
    } else if (n.kind === 'mux') sites.push({ kind: 'condition', expr: e });
  };
  const stmts = (body: readonly Stmt[]): void => {
    for (const s of body) {
      if (s.kind === 'set') {
        visit(s.value);
        if (DATAPATH_SIGNAL.test(s.target.name)) sites.push({ kind: 'stuck-at', stmt: s });
      } else if (s.kind === 'if') {
        visit(s.cond);
        sites.push({ kind: 'condition', stmt: s });
        stmts(s.then);
        stmts(s.otherwise);
      } else {
        visit(s.subject);
        for (const c of s.cases) stmts(c.body);
        if (s.otherwise) stmts(s.otherwise);
      }
    }
  };
  for (const p of m.processes) stmts(p.body);
  for (const w of m.memoryWrites) [w.enable, w.addr, w.data].forEach(visit);
  for (const i of m.instances) for (const [port, e] of i.connections) if (i.module.ports.find((p) => p.name === port)?.role === 'input') visit(e);
  return sites;
}

/** Draws a concrete mutation for a site (which bit, which operand) with `pick(n)` in 0..n-1. */
export function mutationAt(site: MutationSite, pick: (n: number) => number): Mutation {
  const at = (loc: SourceLocation | null) => (loc?.file ? ` at ${formatLocation(loc)}` : '');
  if ('stmt' in site) {
    const s = site.stmt;
    if (s.kind === 'set') {
      const bit = pick(s.target.width);
      const one = pick(2) === 1;
      const mask = 1n << BigInt(bit);
      const all = (1n << BigInt(s.target.width)) - 1n;
      return {
        kind: 'stuck-at',
        site,
        what: `bit ${bit} of ${s.target.name} stuck at ${one ? 1 : 0}${at(s.location)}`,
        apply: (v) => (one ? v.or(lit(v.width, mask)) : v.and(lit(v.width, all ^ mask))),
      };
    }
    if (s.kind === 'if') return { kind: 'condition', site, what: `if condition inverted${at(s.cond.location)}`, apply: (c) => c.not() };
    throw new Error('internal: a switch is not a mutation site');
  }
  const e = site.expr;
  const n = e.node;
  if (site.kind === 'constant' && (n.kind === 'const' || n.kind === 'param')) {
    const bit = pick(n.width);
    const value = n.value ^ (1n << BigInt(bit));
    const name = n.kind === 'param' ? ` (${n.name})` : '';
    return { kind: 'constant', site, what: `constant ${n.width}'h${n.value.toString(16)}${name} → ${n.width}'h${value.toString(16)}${at(e.location)}`, apply: () => lit(n.width, value) };
  }
  if (site.kind === 'operator' && n.kind === 'binary') {
    const op = SWAP[n.op]!;
    return { kind: 'operator', site, what: `operator '${n.op}' → '${op}' (${n.a.width} bits)${at(e.location)}`, apply: (r) => rebuild(r, { ...(r.node as Extract<ExprNode, { kind: 'binary' }>), op }) };
  }
  if (site.kind === 'dropped-term' && n.kind === 'binary') {
    const keepLeft = pick(2) === 0;
    return {
      kind: 'dropped-term',
      site,
      what: `'${n.op}' drops its ${keepLeft ? 'right' : 'left'} operand (${n.a.width} bits)${at(e.location)}`,
      apply: (r) => {
        const b = r.node as Extract<ExprNode, { kind: 'binary' }>;
        return keepLeft ? b.a : b.b;
      },
    };
  }
  if (site.kind === 'condition' && n.kind === 'mux') {
    return { kind: 'condition', site, what: `mux select inverted (${n.width} bits)${at(e.location)}`, apply: (r) => rebuild(r, { ...(r.node as Extract<ExprNode, { kind: 'mux' }>), sel: (r.node as Extract<ExprNode, { kind: 'mux' }>).sel.not() }) };
  }
  throw new Error(`internal: no ${site.kind} mutation for a '${n.kind}' node`);
}

/** A node with new fields (the same width). */
function rebuild(e: Expr, node: ExprNode): Expr {
  return new Expr(node);
}

/** `e` with its operands replaced (the same node when none changed). */
function withChildren(e: Expr, kids: readonly Expr[]): Expr {
  const old = childrenOf(e);
  if (kids.every((k, i) => k === old[i])) return e;
  const n = e.node;
  switch (n.kind) {
    case 'unary':
      return rebuild(e, { ...n, a: kids[0]! });
    case 'slice':
      return rebuild(e, { ...n, a: kids[0]! });
    case 'repeat':
      return rebuild(e, { ...n, a: kids[0]! });
    case 'binary':
      return rebuild(e, { ...n, a: kids[0]!, b: kids[1]! });
    case 'concat':
      return rebuild(e, { ...n, parts: Object.freeze([...kids]) });
    case 'mux':
      return rebuild(e, { ...n, sel: kids[0]!, t: kids[1]!, f: kids[2]! });
    case 'memread':
      return rebuild(e, { ...n, addr: kids[0]! });
    default:
      return e;
  }
}

/** The width of the mutant selector `mutant_id`, and the plusarg that sets it. */
export const MUTANT_ID_WIDTH = 16;
export const MUTANT_PLUSARG = 'MUTANT';

/**
 * `m` with `mutations` applied. With `schemata`, mutation i (1-based) is live only while the
 * selector `mutant_id` (a simulation-only register the emitter loads from +MUTANT=<id>) equals i,
 * and the module behaves as the original for any other value; without, every mutation is applied
 * (give one for a plain single mutant).
 */
export function mutateModule(m: Module, mutations: readonly Mutation[], schemata: boolean): { module: Module; selector: Signal | null } {
  const selector = schemata ? new Signal({ name: 'mutant_id', width: MUTANT_ID_WIDTH, role: 'wire', doc: `mutation campaign: the live mutant (+${MUTANT_PLUSARG}=<id>; 0: none)` }) : null;
  const onExpr = new Map<Expr, { k: number; mut: Mutation }[]>();
  const onStmt = new Map<Stmt, { k: number; mut: Mutation }[]>();
  mutations.forEach((mut, i) => {
    const entry = { k: i + 1, mut };
    if ('expr' in mut.site) onExpr.set(mut.site.expr, [...(onExpr.get(mut.site.expr) ?? []), entry]);
    else onStmt.set(mut.site.stmt, [...(onStmt.get(mut.site.stmt) ?? []), entry]);
  });
  /** Each mutation's value in place of `original`: guarded by the selector, or alone. */
  const choose = (original: Expr, entries: readonly { k: number; mut: Mutation }[] | undefined): Expr => {
    let out = original;
    for (const { k, mut } of entries ?? []) {
      const v = mut.apply(original);
      if (v.width !== original.width) throw new Error(`internal: mutation '${mut.what}' changes the width`);
      out = selector ? rebuild(out, { kind: 'mux', sel: selector.eq(lit(MUTANT_ID_WIDTH, k)), t: v, f: out, width: out.width }) : v;
    }
    return out;
  };
  const memo = new Map<Expr, Expr>();
  const rw = (e: Expr): Expr => {
    const done = memo.get(e);
    if (done) return done;
    const out = choose(withChildren(e, childrenOf(e).map(rw)), onExpr.get(e));
    memo.set(e, out);
    return out;
  };
  const stmts = (body: readonly Stmt[]): readonly Stmt[] =>
    Object.freeze(
      body.map((s): Stmt => {
        if (s.kind === 'set') return { ...s, value: choose(rw(s.value), onStmt.get(s)) };
        if (s.kind === 'if') return { ...s, cond: choose(rw(s.cond), onStmt.get(s)), then: stmts(s.then), otherwise: stmts(s.otherwise) };
        return { ...s, subject: rw(s.subject), cases: s.cases.map((c) => ({ ...c, body: stmts(c.body) })), otherwise: s.otherwise ? stmts(s.otherwise) : null };
      }),
    );
  const processes: Process[] = m.processes.map((p) => ({ ...p, body: stmts(p.body) }));
  const module: Module = {
    ...m,
    signals: selector ? [...m.signals, selector] : m.signals,
    processes,
    memoryWrites: m.memoryWrites.map((w) => ({ ...w, enable: rw(w.enable), addr: rw(w.addr), data: rw(w.data) })),
    instances: m.instances.map((i) => ({ ...i, connections: new Map([...i.connections].map(([k, e]) => [k, e instanceof Signal ? e : rw(e)])) })),
  };
  return { module, selector };
}
