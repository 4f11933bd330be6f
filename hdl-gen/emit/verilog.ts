import type { Expr, SignalLike } from '../core/expr';
import type { Module, Stmt } from '../core/module';
import type { Signal } from '../core/signal';
import { childrenOf, statementExprs } from '../core/walk';
import { alt, atom, fill, flat, group, join, layout, line, nest, softline, type Doc } from './pretty';

/**
 * Verilog-2005 for one module, in the verilog-axis / Corundum style (spec/design/style.md):
 * `resetall/`timescale/`default_nettype none around the file; a header saying what the module is,
 * its parameters and that it is generated; ports grouped by interface; registers as
 * `<name>_reg` with their `<name>_next`, one `always @(posedge clk)` per domain with the
 * synchronous reset last; no initial blocks. Deterministic: the same module gives the same bytes.
 *
 * Expressions are hash-consed: structurally equal subexpressions (same node kind, operator, width,
 * constant or name, and equal operands) are one expression, and one that is read more than once is
 * computed once, in a temporary wire `_tN` (numbered in the order they are first read). Every line
 * fits in `lineWidth` columns: expressions go through a pretty-printer (./pretty.ts) that breaks
 * them after an operator, `?` or `:`, filling lines with the operands of a chain such as
 * `a ^ b ^ c`; long comments are wrapped onto lines of their own.
 */
export interface EmitOptions {
  /** How to regenerate the file, for the header. */
  readonly regenerate?: string;
  /**
   * Simulation only: wires of the module emitted as registers that an `initial` block loads once
   * from a plusarg (`+NAME=<decimal>`, 0 when absent), e.g. the live mutant of a mutation campaign.
   * Never in the RTL a user synthesizes.
   */
  readonly plusargs?: readonly { readonly signal: string; readonly plusarg: string }[];
  /** The longest line emitted (default 160). */
  readonly lineWidth?: number;
}

const INDENT = '    ';
export const LINE_WIDTH = 160;
/** A concatenation fills lines only when all its parts are at most this long (else one per line). */
const FILL_PART = 40;
/** Chains of these operators are printed without inner parentheses: Verilog groups them from the left. */
const CHAIN_OPS: ReadonlySet<string> = new Set(['^', '&', '|', '+']);

export function emitVerilog(m: Module, opts: EmitOptions = {}): string {
  return new Emitter(m, opts).run();
}

const range = (width: number): string => (width === 1 ? '' : `[${width - 1}:0] `);

/** A sized literal: binary up to 4 bits, hex above. */
export function literal(width: number, value: bigint): string {
  return width <= 4 ? `${width}'b${value.toString(2).padStart(width, '0')}` : `${width}'h${value.toString(16)}`;
}

/**
 * `text` as `//` comment lines (or ` * ` lines of a block comment) of at most `width` columns, each
 * starting with `prefix`; words longer than a line are split.
 */
export function wrapComment(text: string, prefix: string, width: number): string[] {
  const room = Math.max(8, width - prefix.length);
  const out: string[] = [];
  let cur = '';
  for (let word of text.split(/\s+/).filter((w) => w)) {
    while (word.length > room) {
      if (cur) out.push(cur);
      cur = '';
      out.push(word.slice(0, room));
      word = word.slice(room);
    }
    if (!cur) cur = word;
    else if (cur.length + 1 + word.length <= room) cur += ` ${word}`;
    else {
      out.push(cur);
      cur = word;
    }
  }
  if (cur || !out.length) out.push(cur);
  return out.map((l) => `${prefix}${l}`.trimEnd());
}

interface Temp {
  readonly name: string;
  readonly id: number;
  readonly width: number;
  /** The right-hand side as first built (its operands named then); rebuilt if it must change. */
  doc: Doc;
  /** Named because it did not fit on the line that reads it, not because it is shared. */
  readonly tooLong: boolean;
}

class Emitter {
  private readonly out: string[] = [];
  private readonly width: number;
  private readonly procedural = new Set<Signal>();

  // Hash-consing: every expression object gets the id of its structure.
  private readonly ids = new Map<Expr, number>();
  private readonly byKey = new Map<string, number>();
  private readonly signalIds = new Map<SignalLike, number>();
  /** The first expression seen with each id. */
  private readonly reps: Expr[] = [];
  /** How often each distinct expression is read: one read twice or more is named once (a wire). */
  private readonly uses: number[] = [];

  private readonly temps: Temp[] = [];
  private readonly named = new Map<number, string>();
  /** Temporaries read through slices: some of their bits may be unread (lint waiver). */
  private readonly sliced = new Set<string>();
  /** Atoms (names, literals) that did not fit on their line: read through a temporary instead. */
  private readonly tooLong = new Set<number>();

  constructor(
    private readonly m: Module,
    private readonly opts: EmitOptions,
  ) {
    this.width = opts.lineWidth ?? LINE_WIDTH;
    for (const p of m.processes) if (!p.continuous) collectTargets(p.body, this.procedural);
    const count = (e: Expr) => {
      const id = this.canon(e);
      const k = this.uses[id]!;
      this.uses[id] = k + 1;
      if (k === 0) for (const c of childrenOf(e)) count(c);
    };
    for (const p of m.processes) for (const e of statementExprs(p.body)) count(e);
    for (const w of m.memoryWrites) [w.enable, w.addr, w.data].forEach(count);
    for (const i of m.instances) for (const e of i.connections.values()) count(e);
  }

  /** The id of `e`'s structure: equal for expressions that are built alike. */
  private canon(e: Expr): number {
    const known = this.ids.get(e);
    if (known !== undefined) return known;
    const n = e.node;
    let key: string;
    switch (n.kind) {
      case 'const':
        key = `c ${n.width} ${n.value.toString(16)}`;
        break;
      case 'param':
        key = `p ${n.width} ${n.name} ${n.value.toString(16)}`;
        break;
      case 'ref': {
        let s = this.signalIds.get(n.signal);
        if (s === undefined) this.signalIds.set(n.signal, (s = this.signalIds.size));
        key = `r ${s}`;
        break;
      }
      case 'unary':
        key = `u ${n.op} ${n.width} ${this.canon(n.a)}`;
        break;
      case 'binary':
        key = `b ${n.op} ${n.width} ${this.canon(n.a)} ${this.canon(n.b)}`;
        break;
      case 'slice':
        key = `s ${n.width} ${n.lo} ${this.canon(n.a)}`;
        break;
      case 'concat':
        key = `k ${n.width} ${n.parts.map((p) => this.canon(p)).join(' ')}`;
        break;
      case 'repeat':
        key = `x ${n.times} ${this.canon(n.a)}`;
        break;
      case 'mux':
        key = `m ${n.width} ${this.canon(n.sel)} ${this.canon(n.t)} ${this.canon(n.f)}`;
        break;
      case 'memread':
        key = `M ${n.width} ${n.memory.name} ${this.canon(n.addr)}`;
        break;
    }
    let id = this.byKey.get(key);
    if (id === undefined) {
      id = this.reps.length;
      this.byKey.set(key, id);
      this.reps.push(e);
      this.uses.push(0);
    }
    this.ids.set(e, id);
    return id;
  }

  run(): string {
    const m = this.m;
    const body: string[] = [];
    // Statements first, so that temporaries they need are known before declarations are written.
    const assigns = m.processes
      .filter((p) => p.continuous)
      .map((p) => {
        const s = p.body[0] as Extract<Stmt, { kind: 'set' }>;
        return this.render(() => [`assign ${this.name(s.target)} = `, this.doc(s.value), ';'], '');
      });
    const blocks = m.processes
      .filter((p) => !p.continuous)
      .map((p) => {
        const lines = ['always @* begin'];
        if (p.kind === 'sync') {
          for (const t of sortedTargets(p.body)) lines.push(`${INDENT}${t.name}_next = ${t.name}_reg;`);
        }
        this.stmts(p.body, 1, p.kind === 'sync', lines);
        lines.push('end');
        return lines.join('\n');
      });
    const clocked = m.domains.map((d) => this.domainBlock(d)).filter((b) => b !== null) as string[];
    const instances = m.instances.map((inst) => {
      const conns = inst.module.ports.map((p, i) =>
        this.render(() => [`${INDENT}.${p.name}(`, this.doc(inst.connections.get(p.name)!), i === inst.module.ports.length - 1 ? ')' : '),'], INDENT),
      );
      return `${inst.module.name} ${inst.name} (\n${conns.join('\n')}\n);`;
    });
    const tempAssigns = this.tempAssigns();

    this.header();
    this.portList();
    if (m.localparams.size) {
      body.push('');
      for (const [name, p] of [...m.localparams].sort(([a], [b]) => a.localeCompare(b))) {
        const head = `localparam ${range(p.width)}${name} = `;
        const text = this.render(() => [head, this.literalDoc(p.width, p.value, -1, this.width - head.length - 1), ';'], '');
        body.push(...this.withDoc(text, p.doc, ''));
      }
    }
    const decls = this.declarations();
    if (decls.length) body.push('', ...decls);
    if (this.temps.length) {
      if (!decls.length) body.push('');
      for (const t of this.temps) {
        const decl = `wire ${range(t.width)}${t.name};`;
        const why = t.tooLong ? ' // named only to fit the line that reads it' : '';
        if (this.sliced.has(t.name)) body.push('// verilator lint_off UNUSED', `${decl} // read through slices`, '// verilator lint_on UNUSED');
        else body.push(`${decl}${why}`);
      }
    }
    if (tempAssigns.length || assigns.length) body.push('', ...tempAssigns, ...assigns);
    for (const b of blocks) body.push('', b);
    for (const b of clocked) body.push('', b);
    for (const i of instances) body.push('', i);
    this.out.push(...body, '', 'endmodule', '', '`resetall', '');
    return this.out.join('\n');
  }

  /**
   * Lays out one statement (its first line starts at column 0 and carries its own indentation;
   * broken lines indent from `indent`). An atom that does not fit even on a line of its own is
   * read through a temporary instead, and the statement laid out again.
   */
  private render(build: () => Doc, indent: string): string {
    for (;;) {
      const { text, overflow } = layout(build(), this.width, indent, INDENT);
      const fresh = overflow.filter((id) => id >= 0 && !this.tooLong.has(id) && !this.named.has(id));
      if (!fresh.length) return text;
      for (const id of fresh) this.tooLong.add(id);
    }
  }

  /** `assign _tN = …;` for every temporary, in number order; laying one out may add more. */
  private tempAssigns(): string[] {
    const texts: string[] = [];
    const rhs = new Map<string, string>();
    for (let i = 0; i < this.temps.length; i++) {
      const t = this.temps[i]!;
      let first = true;
      texts.push(
        this.render(() => {
          if (!first) t.doc = this.nodeDoc(this.reps[t.id]!, t.id);
          first = false;
          return [`assign ${t.name} = `, t.doc, ';'];
        }, ''),
      );
      // Hash-consing makes every temporary a distinct expression; equal text would be a bug here.
      const key = flat(t.doc);
      const twin = rhs.get(key);
      if (twin !== undefined) throw new Error(`internal: temporaries ${twin} and ${t.name} of ${this.m.name} are both ${key}`);
      rhs.set(key, t.name);
    }
    return texts;
  }

  private header(): void {
    const m = this.m;
    this.out.push('`resetall', '`timescale 1ns / 1ps', '`default_nettype none', '', '/*');
    for (const line of m.doc.trim().split('\n')) {
      if (` * ${line}`.length <= this.width) this.out.push(` *${line ? ' ' + line : ''}`);
      else this.out.push(...wrapComment(line, ' * ', this.width));
    }
    const params = Object.entries(m.params);
    if (params.length) {
      this.out.push(' *', ' * Parameters:');
      for (const [k, v] of params) this.out.push(...this.commentLines(`${k} = ${v}`, ' *   '));
    }
    this.out.push(' *', ...this.commentLines(`Generated by hdl-gen; do not edit.${this.opts.regenerate ? ` Regenerate with: ${this.opts.regenerate}` : ''}`, ' * '), ' */', '');
  }

  /** One comment line, or several when it is too long. */
  private commentLines(text: string, prefix: string): string[] {
    return `${prefix}${text}`.length <= this.width ? [`${prefix}${text}`] : wrapComment(text, prefix, this.width);
  }

  /** A declaration with its doc: a trailing `// doc` if the line stays short, else `//` lines above it. */
  private withDoc(decl: string, doc: string | null, indent: string): string[] {
    if (!doc) return [decl];
    const one = `${decl} // ${doc}`;
    if (!one.includes('\n') && one.length <= this.width) return [one];
    return [...wrapComment(doc, `${indent}// `, this.width), decl];
  }

  private portList(): void {
    const m = this.m;
    this.out.push(`module ${m.name} (`);
    const ports = m.ports;
    const typeWidth = Math.max(...ports.map((p) => this.portType(p).length));
    let group: string | null | undefined;
    ports.forEach((p, i) => {
      if (p.group !== group) {
        if (i > 0) this.out.push('');
        if (p.group) this.out.push(`${INDENT}/*`, ...this.commentLines(p.group, `${INDENT} * `), `${INDENT} */`);
        group = p.group;
      }
      const waiver = this.m.unused.get(p.name);
      if (waiver !== undefined) this.out.push(`${INDENT}// verilator lint_off UNUSED`, ...this.commentLines(waiver, `${INDENT}// `));
      const comma = i === ports.length - 1 ? '' : ',';
      this.out.push(...this.withDoc(`${INDENT}${this.portType(p).padEnd(typeWidth)} ${p.name}${comma}`, signalDoc(p), INDENT));
      if (waiver !== undefined) this.out.push(`${INDENT}// verilator lint_on UNUSED`);
    });
    this.out.push(');');
  }

  private portType(p: Signal): string {
    const dir = p.role === 'input' ? 'input ' : 'output';
    const kind = p.role === 'output' && this.procedural.has(p) ? 'reg ' : 'wire';
    return `${dir} ${kind} ${range(p.width)}`.trimEnd();
  }

  private declarations(): string[] {
    const lines: string[] = [];
    const waive = (name: string, decl: string[]) => {
      const w = this.m.unused.get(name);
      return w === undefined ? decl : ['// verilator lint_off UNUSED', ...this.commentLines(w, '// '), ...decl, '// verilator lint_on UNUSED'];
    };
    const plusargs = new Map((this.opts.plusargs ?? []).map((p) => [p.signal, p.plusarg]));
    for (const s of this.m.signals) {
      const plusarg = plusargs.get(s.name);
      if (plusarg !== undefined) {
        lines.push(
          ...this.withDoc(`reg ${range(s.width)}${s.name};`, signalDoc(s), ''),
          'initial begin',
          `${INDENT}if (!$value$plusargs("${plusarg}=%d", ${s.name})) ${s.name} = ${literal(s.width, 0n)};`,
          'end',
        );
      } else if (s.role === 'reg') {
        lines.push(...waive(s.name, this.withDoc(`reg ${range(s.width)}${s.name}_reg;`, signalDoc(s), '')), `reg ${range(s.width)}${s.name}_next;`);
      } else {
        lines.push(...waive(s.name, this.withDoc(`${this.procedural.has(s) ? 'reg ' : 'wire'} ${range(s.width)}${s.name};`, signalDoc(s), '')));
      }
    }
    for (const mem of this.m.memories) lines.push(`reg ${range(mem.width)}${mem.name} [0:${mem.depth - 1}];`);
    return lines;
  }

  private domainBlock(d: Module['domains'][number]): string | null {
    const regs = this.m.signals.filter((s) => s.role === 'reg' && s.domain === d);
    const writes = this.m.memoryWrites.filter((w) => w.domain === d);
    if (!regs.length && !writes.length) return null;
    const lines = [`always @(posedge ${d.clock.name}) begin`];
    for (const r of regs) lines.push(`${INDENT}${r.name}_reg <= ${r.name}_next;`);
    const pad2 = INDENT + INDENT;
    for (const w of writes) {
      lines.push(
        this.render(() => [`${INDENT}if (`, nest(this.doc(w.enable)), ') begin'], INDENT),
        this.render(() => [`${pad2}${w.memory.name}[`, this.doc(w.addr), '] <= ', this.doc(w.data), ';'], pad2),
        `${INDENT}end`,
      );
    }
    const reset = regs.filter((r) => r.resetValue !== null);
    if (reset.length && d.reset) {
      lines.push('', `${INDENT}if (${d.reset.name}) begin`);
      for (const r of reset) {
        const head = `${pad2}${r.name}_reg <= `;
        lines.push(this.render(() => [head, this.literalDoc(r.width, r.resetValue!, -1, this.width - head.length - 1), ';'], pad2));
      }
      lines.push(`${INDENT}end`);
    }
    lines.push('end');
    return lines.join('\n');
  }

  private stmts(stmts: readonly Stmt[], depth: number, sync: boolean, lines: string[]): void {
    const pad = INDENT.repeat(depth);
    for (const s of stmts) {
      if (s.kind === 'set') {
        const target = sync ? `${s.target.name}_next` : this.name(s.target);
        lines.push(this.render(() => [`${pad}${target} = `, this.doc(s.value), ';'], pad));
      } else if (s.kind === 'if') {
        // The condition's broken lines indent two levels, below the statements of the branch.
        lines.push(this.render(() => [`${pad}if (`, nest(this.doc(s.cond)), ') begin'], pad));
        this.stmts(s.then, depth + 1, sync, lines);
        if (s.otherwise.length) {
          lines.push(`${pad}end else begin`);
          this.stmts(s.otherwise, depth + 1, sync, lines);
        }
        lines.push(`${pad}end`);
      } else {
        lines.push(this.render(() => [`${pad}case (`, nest(this.doc(s.subject)), ')'], pad));
        const labelPad = pad + INDENT;
        for (const c of s.cases) {
          const labels = c.values.map((v, i) => {
            const name = c.names[i];
            return name ? atom(name, -1) : this.literalDoc(s.subject.width, v, -1, this.width - labelPad.length - ': begin'.length);
          });
          lines.push(this.render(() => [labelPad, group(nest(fill(labels.map((l, i) => (i < labels.length - 1 ? [l, ','] : l))))), ': begin'], labelPad));
          this.stmts(c.body, depth + 2, sync, lines);
          lines.push(`${labelPad}end`);
        }
        if (s.otherwise) {
          lines.push(`${labelPad}default: begin`);
          this.stmts(s.otherwise, depth + 2, sync, lines);
          lines.push(`${labelPad}end`);
        } else if (s.subject.width > 16 || s.cases.reduce((k, c) => k + c.values.length, 0) < 2 ** s.subject.width) {
          // The other values keep what was set before the case (lint: CASEINCOMPLETE).
          lines.push(`${labelPad}default: begin`, `${labelPad}end`);
        }
        lines.push(`${pad}endcase`);
      }
    }
  }

  /** The name a signal is read by: registers read their current value. */
  private name(s: Signal): string {
    return s.role === 'reg' ? `${s.name}_reg` : s.name;
  }

  /** Whether the expression with this id is read through a temporary. */
  private shared(id: number): boolean {
    if (this.tooLong.has(id)) return true;
    // Names and bits of names (a slice always indexes a name: a signal or a temporary) are as
    // cheap to repeat as a temporary's name.
    if (!this.sharedKind(this.reps[id]!)) return false;
    return this.uses[id]! > 1;
  }

  /** The temporary of expression `id`, made (and its right-hand side built) on first use. */
  private temp(id: number): string {
    const existing = this.named.get(id);
    if (existing) return existing;
    const e = this.reps[id]!;
    const name = `_t${this.temps.length}`;
    this.named.set(id, name);
    const t: Temp = { name, id, width: e.width, doc: '', tooLong: this.tooLong.has(id) && !(this.uses[id]! > 1 && this.sharedKind(e)) };
    this.temps.push(t);
    t.doc = this.nodeDoc(e, id);
    return name;
  }

  /** Nodes that are named when shared (not names, constants or bits of names). */
  private sharedKind(e: Expr): boolean {
    const k = e.node.kind;
    return !(k === 'ref' || k === 'const' || k === 'param' || k === 'slice');
  }

  /** An expression: a temporary's name when it is shared, else the expression itself. */
  private doc(e: Expr): Doc {
    const id = this.canon(e);
    if (this.shared(id)) return atom(this.temp(id), -1);
    return this.nodeDoc(e, id);
  }

  /** An operand: identifiers, literals, concatenations and indexing need no parentheses. */
  private operand(e: Expr): Doc {
    const d = this.doc(e);
    const k = e.node.kind;
    if (this.shared(this.canon(e)) || k === 'ref' || k === 'const' || k === 'param' || k === 'concat' || k === 'repeat' || k === 'slice' || k === 'memread') return d;
    return ['(', d, ')'];
  }

  /**
   * A literal. One longer than `room` (by default: too long even for a line `assign _tN = …;` of
   * its own, some 540 bits) is written as a concatenation of 64-bit literals, which the printer
   * can break. `id` < 0: never replaced by a temporary.
   */
  private literalDoc(width: number, value: bigint, id: number, room = this.width - 24): Doc {
    const text = literal(width, value);
    if (text.length <= room) return atom(text, id);
    const parts: Doc[] = [];
    // The most significant part takes what is left over, the others 64 bits each.
    for (let hi = width, w = width % 64 || 64; hi > 0; hi -= w, w = 64) {
      parts.push(literal(w, (value >> BigInt(hi - w)) & ((1n << BigInt(w)) - 1n)));
    }
    return concatDoc(parts, true);
  }

  private nodeDoc(e: Expr, id: number): Doc {
    const n = e.node;
    switch (n.kind) {
      case 'const':
        return this.literalDoc(n.width, n.value, id);
      case 'ref':
        return atom(this.name(n.signal as Signal), id);
      case 'param':
        return atom(n.name, id);
      case 'unary':
        return [n.op, this.operand(n.a)];
      case 'binary': {
        if (CHAIN_OPS.has(n.op)) {
          // a ^ b ^ c: Verilog groups equal operators from the left, as the IR's left-nested chain.
          const operands: Expr[] = [n.b];
          let left = n.a;
          for (;;) {
            const l = left.node;
            if (l.kind !== 'binary' || l.op !== n.op || this.shared(this.canon(left))) break;
            operands.push(l.b);
            left = l.a;
          }
          operands.push(left);
          operands.reverse();
          if (operands.length > 2) {
            const items = operands.map((o, i) => (i < operands.length - 1 ? [this.operand(o), ` ${n.op}`] : this.operand(o)));
            return group(nest(fill(items)));
          }
        }
        return group([this.operand(n.a), ` ${n.op}`, nest([line, this.operand(n.b)])]);
      }
      case 'slice': {
        // Verilog can only index names: anything else is first given a name.
        const base = n.a.node.kind === 'ref' ? this.name(n.a.node.signal as Signal) : this.temp(this.canon(n.a));
        if (n.a.node.kind !== 'ref') this.sliced.add(base);
        return atom(n.width === 1 ? `${base}[${n.lo}]` : `${base}[${n.lo + n.width - 1}:${n.lo}]`, id);
      }
      case 'concat':
        return concatDoc(n.parts.map((p) => this.doc(p)), false);
      case 'repeat':
        return [`{${n.times}{`, this.doc(n.a), '}}'];
      case 'mux': {
        // A chain s1 ? a : (s2 ? b : c): on one line with its parentheses, or one `s ? x :` a line.
        const links: { sel: Doc; t: Doc }[] = [];
        let f: Expr = e;
        for (;;) {
          const x = f.node;
          if (x.kind !== 'mux' || (f !== e && this.shared(this.canon(f)))) break;
          links.push({ sel: this.operand(x.sel), t: this.operand(x.t) });
          f = x.f;
        }
        const last = this.operand(f);
        if (links.length === 1) {
          const { sel, t } = links[0]!;
          return group([sel, ' ?', nest([line, t, ' :', line, last])]);
        }
        let flatDoc: Doc = last;
        for (let i = links.length - 1; i >= 0; i--) {
          const { sel, t } = links[i]!;
          flatDoc = i === links.length - 1 ? [sel, ' ? ', t, ' : ', flatDoc] : [sel, ' ? ', t, ' : (', flatDoc, ')'];
        }
        const link = ({ sel, t }: { sel: Doc; t: Doc }): Doc => group([sel, ' ?', nest([line, t]), ' :']);
        const broken: Doc = [link(links[0]!), nest(links.slice(1).flatMap((l) => [line, link(l)]).concat([line, last]))];
        return group(alt(flatDoc, broken));
      }
      case 'memread':
        return [`${n.memory.name}[`, this.doc(n.addr), ']'];
    }
  }
}

/**
 * `{a, b, c}`; when it does not fit, the parts go on the lines below, filling them when every part
 * is short, else one part a line.
 */
function concatDoc(parts: readonly Doc[], short: boolean): Doc {
  const items = parts.map((p, i) => (i < parts.length - 1 ? [p, ','] : p));
  const filled = short || parts.every((p) => flat(p).length <= FILL_PART);
  return group(['{', nest([softline, filled ? fill(items) : join(line, items)]), softline, '}']);
}

function collectTargets(stmts: readonly Stmt[], into: Set<Signal>): void {
  for (const s of stmts) {
    if (s.kind === 'set') into.add(s.target);
    else if (s.kind === 'if') {
      collectTargets(s.then, into);
      collectTargets(s.otherwise, into);
    } else {
      for (const c of s.cases) collectTargets(c.body, into);
      if (s.otherwise) collectTargets(s.otherwise, into);
    }
  }
}

function sortedTargets(stmts: readonly Stmt[]): Signal[] {
  const set = new Set<Signal>();
  collectTargets(stmts, set);
  return [...set];
}

/** A signal's documentation: its doc, and the fields of the record it carries. */
function signalDoc(s: Signal): string | null {
  const parts = [s.doc, s.record ? `record ${s.record.describe()}` : null].filter((x): x is string => !!x);
  return parts.length ? parts.join('; ') : null;
}
