import type { Expr } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import type { Layout } from './record';

/**
 * A record as a group of ports, one per field, named `<prefix>_<field>` (a work request, an event,
 * a completion: the form an integrator wires up field by field). The layout is the one definition:
 * the block declares the ports from it, builds or reads the record value through it, and a
 * testbench drives or samples the same ports by the layout's field names.
 */
export interface PortGroup<F extends string> {
  readonly ports: { readonly [K in F]: Signal };
  /** The record value of the ports (inputs): their fields packed by the layout. */
  readonly value: Expr;
  /** Drives every port (outputs) from a record value of the layout. */
  drive(value: Expr): void;
}

export function portGroup<F extends string>(
  m: ModuleBuilder,
  prefix: string,
  layout: Layout<F>,
  direction: 'input' | 'output',
  group: string,
  docs: { readonly [K in F]?: string } = {},
): PortGroup<F> {
  const ports = {} as Record<F, Signal>;
  for (const f of layout.fields) {
    const doc = (docs as Record<string, string | undefined>)[f.name] ?? f.doc ?? undefined;
    const opts = { group, ...(doc && { doc }) };
    ports[f.name as F] = direction === 'input' ? m.input(`${prefix}_${f.name}`, f.width, opts) : m.output(`${prefix}_${f.name}`, f.width, opts);
  }
  return {
    ports,
    get value() {
      if (direction !== 'input') throw new HdlError(`port group ${prefix}: value() reads inputs`);
      return layout.pack(ports as { [K in F]: Expr });
    },
    drive(value: Expr) {
      if (direction !== 'output') throw new HdlError(`port group ${prefix}: drive() sets outputs`);
      const v = layout.view(value);
      for (const f of layout.fields) m.assign(ports[f.name as F], v[f.name as F]);
    },
  };
}

/**
 * Named constants of the module for an enumeration: `<PREFIX>_<KEY>` localparams, read by name.
 * Each is declared when first read, so the Verilog has no unused localparam.
 */
export function enumConstants<K extends string>(m: ModuleBuilder, prefix: string, width: number, values: { readonly [Key in K]: number }, doc?: (key: K) => string): { readonly [Key in K]: Expr } {
  const out = {};
  const made = new Map<K, Expr>();
  for (const [k, v] of Object.entries(values) as [K, number][]) {
    Object.defineProperty(out, k, {
      enumerable: true,
      get: () => {
        let e = made.get(k);
        if (!e) {
          e = m.constant(`${prefix}_${k}`, width, v, doc?.(k) || null);
          made.set(k, e);
        }
        return e;
      },
    });
  }
  return out as { readonly [Key in K]: Expr };
}
