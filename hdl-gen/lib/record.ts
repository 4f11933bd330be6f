import { Expr, cat, lit, type Value, toExpr } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { RecordInfo } from '../core/signal';

/**
 * Records (Amaranth's StructLayout): a layout names the fields of a bit vector once, with their
 * widths; the first field sits at bit 0. Blocks read fields by name (`view`), build values by name
 * (`pack`, `update`), the emitter names the fields (a view in a module gives each field it reads a
 * wire `<prefix>_<field>`; a port or register declared with the layout documents them), and
 * testbenches pack and unpack with the same object (`encode`, `decode`). No bit offset is written
 * by hand anywhere else.
 */
export interface FieldSpec {
  readonly width: number;
  readonly doc?: string;
  /** The specification the field comes from (an RFC section, a spec/ section): for register maps. */
  readonly ref?: string;
}

/** A field: a width, a spec with a doc, or a nested layout. */
export type FieldDef = number | FieldSpec | Layout<string>;

export interface Field {
  readonly name: string;
  readonly lo: number;
  readonly width: number;
  readonly doc: string | null;
  /** The specification section it comes from, if given. */
  readonly ref: string | null;
  /** A nested record. */
  readonly layout: Layout<string> | null;
}

/** Field values in a testbench: numbers or bigints (nested records: their encoded value). */
export type Encoded<F extends string> = { readonly [K in F]?: bigint | number };

export class Layout<F extends string> implements RecordInfo {
  readonly fields: readonly Field[];
  readonly width: number;
  private readonly byName: ReadonlyMap<string, Field>;

  constructor(
    readonly name: string,
    defs: { readonly [K in F]: FieldDef },
  ) {
    let lo = 0;
    const fields: Field[] = [];
    for (const [fname, def] of Object.entries(defs) as [string, FieldDef][]) {
      if (!/^[a-z][a-z0-9_]*$/.test(fname)) throw new HdlError(`record ${name}: field '${fname}' must be a lower_snake_case identifier`);
      const width = typeof def === 'number' ? def : def.width;
      if (!Number.isInteger(width) || width < 1) throw new HdlError(`record ${name}: field '${fname}' needs a width of at least 1, got ${width}`);
      const layout = def instanceof Layout ? def : null;
      const doc = typeof def === 'object' && !(def instanceof Layout) ? def.doc ?? null : layout ? `record ${layout.name}` : null;
      const ref = typeof def === 'object' && !(def instanceof Layout) ? def.ref ?? null : null;
      fields.push(Object.freeze({ name: fname, lo, width, doc, ref, layout }));
      lo += width;
    }
    if (fields.length === 0) throw new HdlError(`record ${name} has no fields`);
    this.fields = Object.freeze(fields);
    this.width = lo;
    this.byName = new Map(fields.map((f) => [f.name, f]));
    Object.freeze(this);
  }

  field(name: F): Field {
    const f = this.byName.get(name);
    if (!f) throw new HdlError(`record ${this.name} has no field '${name}' (fields: ${this.fields.map((x) => x.name).join(', ')})`);
    return f;
  }

  /** Field `name` of a value of this layout. */
  get(value: Expr, name: F): Expr {
    this.check(value);
    const f = this.field(name);
    return value.slice(f.lo + f.width - 1, f.lo);
  }

  /**
   * The fields of `value` by name. Given a module and a prefix, each field read becomes a wire of
   * the module named `<prefix>_<field>` (made on first read), so the Verilog names it.
   */
  view(value: Expr, named?: { readonly m: ModuleBuilder; readonly prefix: string }): View<F> {
    this.check(value);
    const made = new Map<string, Expr>();
    const read = (name: F): Expr => {
      let e = made.get(name);
      if (!e) {
        const slice = this.get(value, name);
        e = named ? named.m.let(`${named.prefix}_${name}`, slice, { ...(this.field(name).doc && { doc: this.field(name).doc! }) }) : slice;
        made.set(name, e);
      }
      return e;
    };
    const out: Record<string, unknown> = { value };
    for (const f of this.fields) Object.defineProperty(out, f.name, { get: () => read(f.name as F), enumerable: true });
    return Object.freeze(out) as View<F>;
  }

  /** A value of this layout from every field's value (numbers take the field's width). */
  pack(values: { readonly [K in F]: Value }): Expr {
    const parts = this.fields.map((f) => {
      const v = (values as Record<string, Value | undefined>)[f.name];
      if (v === undefined) throw new HdlError(`record ${this.name}: pack() needs field '${f.name}'`);
      const e = toExpr(v, f.width, `field ${this.name}.${f.name}`);
      if (e.width !== f.width) throw new HdlError(`record ${this.name}: field '${f.name}' is ${f.width} bits, given ${e.width}`);
      return e;
    });
    for (const k of Object.keys(values)) this.field(k as F);
    return cat(...parts.reverse());
  }

  /** `value` with some fields replaced. */
  update(value: Expr, changes: { readonly [K in F]?: Value }): Expr {
    this.check(value);
    const all = Object.fromEntries(this.fields.map((f) => [f.name, (changes as Record<string, Value | undefined>)[f.name] ?? this.get(value, f.name as F)]));
    return this.pack(all as { [K in F]: Value });
  }

  /** The all-zero value. */
  zero(): Expr {
    return lit(this.width, 0);
  }

  /** A value for a testbench: fields not given are 0. */
  encode(values: Encoded<F>): bigint {
    let v = 0n;
    for (const [k, x] of Object.entries(values) as [string, bigint | number | undefined][]) {
      if (x === undefined) continue;
      const f = this.field(k as F);
      const b = BigInt(x);
      if (b < 0n || b >= 1n << BigInt(f.width)) throw new RangeError(`record ${this.name}: ${b} does not fit field '${f.name}' (${f.width} bits)`);
      v |= b << BigInt(f.lo);
    }
    return v;
  }

  /** A testbench's view of a value: every field as a bigint. */
  decode(value: bigint): { readonly [K in F]: bigint } {
    return Object.fromEntries(this.fields.map((f) => [f.name, (value >> BigInt(f.lo)) & ((1n << BigInt(f.width)) - 1n)])) as { [K in F]: bigint };
  }

  /** `{name[hi:lo], …}`, most significant field first: a port or register's documentation. */
  describe(): string {
    return `${this.name} {${[...this.fields].reverse().map((f) => `${f.name}${f.width === 1 ? `[${f.lo}]` : `[${f.lo + f.width - 1}:${f.lo}]`}`).join(', ')}}`;
  }

  private check(value: Expr): void {
    if (value.width !== this.width) throw new HdlError(`record ${this.name} is ${this.width} bits, the value is ${value.width}`);
  }
}

export type View<F extends string> = { readonly [K in F]: Expr } & { readonly value: Expr };

/** Declares a record layout: `record('wr', { kind: 3, len: { width: 32, doc: 'octets' } })`. */
export function record<F extends string>(name: string, fields: { readonly [K in F]: FieldDef }): Layout<F> {
  return new Layout<F>(name, fields);
}
