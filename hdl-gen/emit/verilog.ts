import type { Expr } from '../core/expr';
import type { Module, Stmt } from '../core/module';
import type { Signal } from '../core/signal';
import { childrenOf, statementExprs } from '../core/walk';

/**
 * Verilog-2005 for one module, in the verilog-axis / Corundum style (spec/design/style.md):
 * `resetall/`timescale/`default_nettype none around the file; a header saying what the module is,
 * its parameters and that it is generated; ports grouped by interface; registers as
 * `<name>_reg` with their `<name>_next`, one `always @(posedge clk)` per domain with the
 * synchronous reset last; no initial blocks. Deterministic: the same module gives the same bytes.
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
}

const INDENT = '    ';

export function emitVerilog(m: Module, opts: EmitOptions = {}): string {
  return new Emitter(m, opts).run();
}

const range = (width: number): string => (width === 1 ? '' : `[${width - 1}:0] `);

/** A sized literal: binary up to 4 bits, hex above. */
export function literal(width: number, value: bigint): string {
  return width <= 4 ? `${width}'b${value.toString(2).padStart(width, '0')}` : `${width}'h${value.toString(16)}`;
}

class Emitter {
  private readonly out: string[] = [];
  private readonly tempDecls: { name: string; width: number }[] = [];
  /** Temporaries read through slices: some of their bits may be unread (lint waiver). */
  private readonly sliced = new Set<string>();
  private readonly tempAssigns: string[] = [];
  private tempCount = 0;
  private readonly procedural = new Set<Signal>();
  /** How often each expression object occurs: one used twice or more is named once (a wire). */
  private readonly uses = new Map<Expr, number>();
  private readonly named = new Map<Expr, string>();

  constructor(
    private readonly m: Module,
    private readonly opts: EmitOptions,
  ) {
    for (const p of m.processes) if (!p.continuous) collectTargets(p.body, this.procedural);
    const count = (e: Expr) => {
      const k = this.uses.get(e) ?? 0;
      this.uses.set(e, k + 1);
      if (k === 0) for (const c of childrenOf(e)) count(c);
    };
    for (const p of m.processes) for (const e of statementExprs(p.body)) count(e);
    for (const w of m.memoryWrites) [w.enable, w.addr, w.data].forEach(count);
    for (const i of m.instances) for (const e of i.connections.values()) count(e);
  }

  run(): string {
    const m = this.m;
    const body: string[] = [];
    // Statements first, so that temporaries they need are known before declarations are written.
    const assigns = m.processes.filter((p) => p.continuous).map((p) => {
      const s = p.body[0] as Extract<Stmt, { kind: 'set' }>;
      return `assign ${this.name(s.target)} = ${this.top(s.value)};`;
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
      const conns = inst.module.ports.map((p) => `${INDENT}.${p.name}(${this.expr(inst.connections.get(p.name)!)})`);
      return `${inst.module.name} ${inst.name} (\n${conns.join(',\n')}\n);`;
    });

    this.header();
    this.portList();
    if (m.localparams.size) {
      body.push('');
      for (const [name, p] of [...m.localparams].sort(([a], [b]) => a.localeCompare(b))) {
        body.push(`localparam ${range(p.width)}${name} = ${literal(p.width, p.value)};${p.doc ? ` // ${p.doc}` : ''}`);
      }
    }
    const decls = this.declarations();
    if (decls.length) body.push('', ...decls);
    if (this.tempDecls.length) {
      if (!decls.length) body.push('');
      for (const t of this.tempDecls) {
        const decl = `wire ${range(t.width)}${t.name};`;
        if (this.sliced.has(t.name)) body.push('// verilator lint_off UNUSED', `${decl} // read through slices`, '// verilator lint_on UNUSED');
        else body.push(decl);
      }
    }
    if (this.tempAssigns.length || assigns.length) body.push('', ...this.tempAssigns, ...assigns);
    for (const b of blocks) body.push('', b);
    for (const b of clocked) body.push('', b);
    for (const i of instances) body.push('', i);
    this.out.push(...body, '', 'endmodule', '', '`resetall', '');
    return this.out.join('\n');
  }

  private header(): void {
    const m = this.m;
    this.out.push('`resetall', '`timescale 1ns / 1ps', '`default_nettype none', '', '/*');
    for (const line of m.doc.trim().split('\n')) this.out.push(` *${line ? ' ' + line : ''}`);
    const params = Object.entries(m.params);
    if (params.length) {
      this.out.push(' *', ' * Parameters:');
      for (const [k, v] of params) this.out.push(` *   ${k} = ${v}`);
    }
    this.out.push(' *', ` * Generated by hdl-gen; do not edit.${this.opts.regenerate ? ` Regenerate with: ${this.opts.regenerate}` : ''}`, ' */', '');
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
        if (p.group) this.out.push(`${INDENT}/*`, `${INDENT} * ${p.group}`, `${INDENT} */`);
        group = p.group;
      }
      const waiver = this.m.unused.get(p.name);
      if (waiver !== undefined) this.out.push(`${INDENT}// verilator lint_off UNUSED`, `${INDENT}// ${waiver}`);
      const comma = i === ports.length - 1 ? '' : ',';
      this.out.push(`${INDENT}${this.portType(p).padEnd(typeWidth)} ${p.name}${comma}${p.doc ? ` // ${p.doc}` : ''}`);
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
      return w === undefined ? decl : ['// verilator lint_off UNUSED', `// ${w}`, ...decl, '// verilator lint_on UNUSED'];
    };
    const plusargs = new Map((this.opts.plusargs ?? []).map((p) => [p.signal, p.plusarg]));
    for (const s of this.m.signals) {
      const doc = s.doc ? ` // ${s.doc}` : '';
      const plusarg = plusargs.get(s.name);
      if (plusarg !== undefined) {
        lines.push(
          `reg ${range(s.width)}${s.name};${doc}`,
          'initial begin',
          `${INDENT}if (!$value$plusargs("${plusarg}=%d", ${s.name})) ${s.name} = ${literal(s.width, 0n)};`,
          'end',
        );
      } else if (s.role === 'reg') {
        lines.push(...waive(s.name, [`reg ${range(s.width)}${s.name}_reg;${doc}`]), `reg ${range(s.width)}${s.name}_next;`);
      } else {
        lines.push(...waive(s.name, [`${this.procedural.has(s) ? 'reg ' : 'wire'} ${range(s.width)}${s.name};${doc}`]));
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
    for (const w of writes) {
      lines.push(`${INDENT}if (${this.expr(w.enable)}) begin`, `${INDENT}${INDENT}${w.memory.name}[${this.expr(w.addr)}] <= ${this.expr(w.data)};`, `${INDENT}end`);
    }
    const reset = regs.filter((r) => r.resetValue !== null);
    if (reset.length && d.reset) {
      lines.push('', `${INDENT}if (${d.reset.name}) begin`);
      for (const r of reset) lines.push(`${INDENT}${INDENT}${r.name}_reg <= ${literal(r.width, r.resetValue!)};`);
      lines.push(`${INDENT}end`);
    }
    lines.push('end');
    return lines.join('\n');
  }

  private stmts(stmts: readonly Stmt[], depth: number, sync: boolean, lines: string[]): void {
    const pad = INDENT.repeat(depth);
    for (const s of stmts) {
      if (s.kind === 'set') {
        lines.push(`${pad}${sync ? `${s.target.name}_next` : this.name(s.target)} = ${this.expr(s.value)};`);
      } else if (s.kind === 'if') {
        lines.push(`${pad}if (${this.expr(s.cond)}) begin`);
        this.stmts(s.then, depth + 1, sync, lines);
        if (s.otherwise.length) {
          lines.push(`${pad}end else begin`);
          this.stmts(s.otherwise, depth + 1, sync, lines);
        }
        lines.push(`${pad}end`);
      } else {
        lines.push(`${pad}case (${this.expr(s.subject)})`);
        for (const c of s.cases) {
          lines.push(`${pad}${INDENT}${c.values.map((v) => literal(s.subject.width, v)).join(', ')}: begin`);
          this.stmts(c.body, depth + 2, sync, lines);
          lines.push(`${pad}${INDENT}end`);
        }
        if (s.otherwise) {
          lines.push(`${pad}${INDENT}default: begin`);
          this.stmts(s.otherwise, depth + 2, sync, lines);
          lines.push(`${pad}${INDENT}end`);
        } else if (s.subject.width > 16 || s.cases.reduce((k, c) => k + c.values.length, 0) < 2 ** s.subject.width) {
          // The other values keep what was set before the case (lint: CASEINCOMPLETE).
          lines.push(`${pad}${INDENT}default: begin`, `${pad}${INDENT}end`);
        }
        lines.push(`${pad}endcase`);
      }
    }
  }

  /** The name a signal is read by: registers read their current value. */
  private name(s: Signal): string {
    return s.role === 'reg' ? `${s.name}_reg` : s.name;
  }

  /** An operand: identifiers, literals, concatenations and indexing need no parentheses. */
  private operand(e: Expr): string {
    const k = e.node.kind;
    const text = this.expr(e);
    if (this.named.has(e)) return text;
    return k === 'ref' || k === 'const' || k === 'param' || k === 'concat' || k === 'repeat' || k === 'slice' || k === 'memread' ? text : `(${text})`;
  }

  /** A statement's whole right-hand side: a long concatenation gets one part per line. */
  private top(e: Expr): string {
    const n = e.node;
    if (n.kind === 'concat' && !this.shared(e)) {
      const parts = n.parts.map((p) => this.expr(p));
      if (parts.join(', ').length > 100) return `{\n${INDENT}${parts.join(`,\n${INDENT}`)}\n}`;
    }
    return this.expr(e);
  }

  private shared(e: Expr): boolean {
    const n = e.node;
    // Names and bits of names are as cheap to repeat as a temporary's name.
    if (n.kind === 'ref' || n.kind === 'const' || n.kind === 'param' || (n.kind === 'slice' && n.a.node.kind === 'ref')) return false;
    return (this.uses.get(e) ?? 0) > 1;
  }

  expr(e: Expr): string {
    if (this.shared(e)) {
      let name = this.named.get(e);
      if (!name) {
        name = `_t${this.tempCount++}`;
        this.named.set(e, name);
        const text = this.exprNode(e);
        this.tempDecls.push({ name, width: e.width });
        this.tempAssigns.push(`assign ${name} = ${text};`);
      }
      return name;
    }
    return this.exprNode(e);
  }

  private exprNode(e: Expr): string {
    const n = e.node;
    switch (n.kind) {
      case 'const':
        return literal(n.width, n.value);
      case 'ref':
        return this.name(n.signal as Signal);
      case 'unary':
        return `${n.op}${this.operand(n.a)}`;
      case 'binary':
        return `${this.operand(n.a)} ${n.op} ${this.operand(n.b)}`;
      case 'slice': {
        // Verilog can only index names: anything else is first given a name.
        let base: string;
        if (n.a.node.kind === 'ref') base = this.expr(n.a);
        else if (this.shared(n.a)) {
          base = this.expr(n.a);
          this.sliced.add(base);
        } else base = this.temp(n.a);
        return n.width === 1 ? `${base}[${n.lo}]` : `${base}[${n.lo + n.width - 1}:${n.lo}]`;
      }
      case 'concat':
        return `{${n.parts.map((p) => this.expr(p)).join(', ')}}`;
      case 'repeat':
        return `{${n.times}{${this.expr(n.a)}}}`;
      case 'mux':
        return `${this.operand(n.sel)} ? ${this.operand(n.t)} : ${this.operand(n.f)}`;
      case 'memread':
        return `${n.memory.name}[${this.expr(n.addr)}]`;
      case 'param':
        return n.name;
    }
  }

  /** Names an expression so it can be indexed; only some of its bits are read. */
  private temp(e: Expr): string {
    const existing = this.named.get(e);
    if (existing) return existing;
    const name = `_t${this.tempCount++}`;
    this.named.set(e, name);
    const text = this.exprNode(e);
    this.tempDecls.push({ name, width: e.width });
    this.sliced.add(name);
    this.tempAssigns.push(`assign ${name} = ${text};`);
    return name;
  }
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

