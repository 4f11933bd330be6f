import { HdlError, callerLocation, type SourceLocation } from './location';

/**
 * The expression tree: immutable nodes, each with an explicit width fixed at construction.
 * Width rules are explicit and strict (no silent extension or truncation, unlike Verilog):
 * bitwise and arithmetic operators need equal widths and keep them (arithmetic wraps); comparisons
 * and reductions give 1 bit; shifts keep the left operand's width; slices, concatenation,
 * replication and extension say their width. A mismatch is an HdlError at the generator line.
 */
export type BinaryOp = '&' | '|' | '^' | '+' | '-' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '<<' | '>>';
export type UnaryOp = '~' | '&' | '|' | '^';

export type ExprNode =
  | { readonly kind: 'const'; readonly width: number; readonly value: bigint }
  | { readonly kind: 'ref'; readonly width: number; readonly signal: SignalLike }
  | { readonly kind: 'unary'; readonly width: number; readonly op: UnaryOp; readonly a: Expr }
  | { readonly kind: 'binary'; readonly width: number; readonly op: BinaryOp; readonly a: Expr; readonly b: Expr }
  | { readonly kind: 'slice'; readonly width: number; readonly a: Expr; readonly lo: number }
  | { readonly kind: 'concat'; readonly width: number; readonly parts: readonly Expr[] }
  | { readonly kind: 'repeat'; readonly width: number; readonly a: Expr; readonly times: number }
  | { readonly kind: 'mux'; readonly width: number; readonly sel: Expr; readonly t: Expr; readonly f: Expr }
  | { readonly kind: 'memread'; readonly width: number; readonly memory: SignalLike; readonly addr: Expr }
  /** A named constant (a localparam of the module), read by its name. */
  | { readonly kind: 'param'; readonly width: number; readonly name: string; readonly value: bigint };

/** What a `ref` node points at: a module's signal (declared in signal.ts). */
export interface SignalLike {
  readonly name: string;
  readonly width: number;
  readonly location: SourceLocation | null;
}

export type Value = Expr | bigint | number;

const COMPARE: ReadonlySet<BinaryOp> = new Set(['==', '!=', '<', '<=', '>', '>=']);

export class Expr {
  readonly width: number;
  readonly location: SourceLocation | null;

  constructor(readonly node: ExprNode) {
    this.width = node.width;
    this.location = callerLocation();
    // Subclasses (Signal) add fields and freeze themselves.
    if (new.target === Expr) Object.freeze(this);
  }

  and(b: Value): Expr {
    return binary('&', this, b);
  }
  or(b: Value): Expr {
    return binary('|', this, b);
  }
  xor(b: Value): Expr {
    return binary('^', this, b);
  }
  add(b: Value): Expr {
    return binary('+', this, b);
  }
  sub(b: Value): Expr {
    return binary('-', this, b);
  }
  eq(b: Value): Expr {
    return binary('==', this, b);
  }
  ne(b: Value): Expr {
    return binary('!=', this, b);
  }
  lt(b: Value): Expr {
    return binary('<', this, b);
  }
  le(b: Value): Expr {
    return binary('<=', this, b);
  }
  gt(b: Value): Expr {
    return binary('>', this, b);
  }
  ge(b: Value): Expr {
    return binary('>=', this, b);
  }
  /** Logical shift left by `b` (any width); the result keeps this width. */
  shl(b: Value): Expr {
    return binary('<<', this, b);
  }
  shr(b: Value): Expr {
    return binary('>>', this, b);
  }
  not(): Expr {
    return new Expr({ kind: 'unary', op: '~', a: this, width: this.width });
  }
  /** Reduction AND / OR / XOR: 1 bit. */
  all(): Expr {
    return new Expr({ kind: 'unary', op: '&', a: this, width: 1 });
  }
  any(): Expr {
    return new Expr({ kind: 'unary', op: '|', a: this, width: 1 });
  }
  parity(): Expr {
    return new Expr({ kind: 'unary', op: '^', a: this, width: 1 });
  }
  /** Bits [hi:lo], inclusive, as in Verilog. */
  slice(hi: number, lo: number): Expr {
    if (!Number.isInteger(hi) || !Number.isInteger(lo) || lo < 0 || hi < lo || hi >= this.width) {
      throw new HdlError(`slice [${hi}:${lo}] is outside a ${this.width}-bit value${describe(this)}`);
    }
    if (lo === 0 && hi === this.width - 1) return this;
    return sliceOf(this, hi, lo);
  }
  bit(i: number): Expr {
    return this.slice(i, i);
  }
  /** Zero-extends to `width` bits (never truncates). */
  zext(width: number): Expr {
    if (width < this.width) throw new HdlError(`zext to ${width} bits would truncate a ${this.width}-bit value${describe(this)}`);
    return width === this.width ? this : cat(lit(width - this.width, 0n), this);
  }
  /** Replicates this value `times` times. */
  repeat(times: number): Expr {
    if (!Number.isInteger(times) || times < 1) throw new HdlError(`repeat count must be ≥ 1, got ${times}`);
    return times === 1 ? this : new Expr({ kind: 'repeat', a: this, times, width: this.width * times });
  }
}

/**
 * Bits [hi:lo] of `e`, pushed down through the nodes where that is exact, so the emitted Verilog
 * indexes names rather than materialising whole expressions: constants, slices, concatenations,
 * muxes and bitwise operators. Other nodes (arithmetic, comparisons, …) keep a slice node.
 */
function sliceOf(e: Expr, hi: number, lo: number): Expr {
  const n = e.node;
  switch (n.kind) {
    case 'const':
      return lit(hi - lo + 1, (n.value >> BigInt(lo)) & ((1n << BigInt(hi - lo + 1)) - 1n));
    case 'slice':
      return n.a.slice(n.lo + hi, n.lo + lo);
    case 'concat': {
      const parts: Expr[] = [];
      let top = e.width;
      for (const p of n.parts) {
        const pLo = top - p.width;
        const a = Math.max(lo, pLo);
        const b = Math.min(hi, top - 1);
        if (a <= b) parts.push(p.slice(b - pLo, a - pLo));
        top = pLo;
      }
      return cat(...parts);
    }
    case 'mux':
      return mux(n.sel, n.t.slice(hi, lo), n.f.slice(hi, lo));
    case 'binary':
      if (n.op === '&' || n.op === '|' || n.op === '^') return binary(n.op, n.a.slice(hi, lo), n.b.slice(hi, lo));
      break;
    case 'unary':
      if (n.op === '~') return n.a.slice(hi, lo).not();
      break;
  }
  return new Expr({ kind: 'slice', a: e, lo, width: hi - lo + 1 });
}

function describe(e: Expr): string {
  return e.node.kind === 'ref' ? ` (signal '${e.node.signal.name}')` : '';
}

/** A constant of `width` bits; the value must fit. */
export function lit(width: number, value: bigint | number): Expr {
  checkWidth(width);
  const v = BigInt(value);
  if (v < 0n || v >= 1n << BigInt(width)) throw new HdlError(`constant ${v} does not fit ${width} bits`);
  return new Expr({ kind: 'const', width, value: v });
}

export function checkWidth(width: number): void {
  if (!Number.isInteger(width) || width < 1 || width > 65536) throw new HdlError(`width must be an integer from 1 to 65536, got ${width}`);
}

/** Numbers and bigints take the width of the other operand; `what` names it in an error. */
export function toExpr(v: Value, width: number, what = 'the other operand'): Expr {
  if (v instanceof Expr) return v;
  const b = BigInt(v);
  if (b < 0n || b >= 1n << BigInt(width)) throw new HdlError(`constant ${b} does not fit ${what} (${width} bits)`);
  return lit(width, b);
}

function binary(op: BinaryOp, a: Expr, bv: Value): Expr {
  const shift = op === '<<' || op === '>>';
  const b = bv instanceof Expr ? bv : toExpr(bv, shift ? Math.max(1, BigInt(bv).toString(2).length) : a.width, `'${op}' with a ${a.width}-bit value${describe(a)}`);
  if (!shift && a.width !== b.width) {
    throw new HdlError(`width mismatch in '${op}': ${a.width} bits${describe(a)} vs ${b.width} bits${describe(b)}`);
  }
  return new Expr({ kind: 'binary', op, a, b, width: COMPARE.has(op) ? 1 : a.width });
}

/** Concatenation, most significant part first (as in Verilog). */
export function cat(...parts: Expr[]): Expr {
  if (parts.length === 0) throw new HdlError('cat() needs at least one part');
  if (parts.length === 1) return parts[0]!;
  return new Expr({ kind: 'concat', parts: Object.freeze([...parts]), width: parts.reduce((w, p) => w + p.width, 0) });
}

/** `sel ? t : f`; `sel` is 1 bit, the arms have equal widths. */
export function mux(sel: Expr, t: Value, f: Value): Expr {
  if (sel.width !== 1) throw new HdlError(`mux select must be 1 bit, got ${sel.width}${describe(sel)}`);
  const w = t instanceof Expr ? t.width : f instanceof Expr ? f.width : null;
  if (w === null) throw new HdlError('mux needs at least one arm with a width (an Expr)');
  const te = toExpr(t, w, 'the other mux arm');
  const fe = toExpr(f, w, 'the other mux arm');
  if (te.width !== fe.width) throw new HdlError(`mux arms differ in width: ${te.width} bits${describe(te)} vs ${fe.width} bits${describe(fe)}`);
  return new Expr({ kind: 'mux', sel, t: te, f: fe, width: w });
}

/** XOR of several 1-bit or equal-width values (an XOR tree); `width` when there are none. */
export function xorAll(values: readonly Expr[], width: number): Expr {
  if (values.length === 0) return lit(width, 0n);
  return values.reduce((acc, v) => acc.xor(v));
}
