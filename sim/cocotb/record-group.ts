/**
 * A group of ports that carries one record per transfer, as the blocks declare them: a port
 * `<prefix>_<field>` for each field (wr_kind, wr_len, …) beside the handshake `<prefix>_valid` /
 * `<prefix>_ready`. The fields are found in the model's port list, so a driver or monitor of the
 * group is data (an object of field values), not a line of code per port.
 *
 * Field names are TypeScript's camelCase of the port's suffix (`sinkStag` for wr_sink_stag,
 * `rxS0` for cfg_rx_s0). A field whose port holds a record of its own (hdl-gen/lib/record.ts; the
 * generator's port list and manifest.json carry its layout as `record`) takes and gives an object
 * of its subfields, encoded and decoded by that layout.
 */
import { Layout } from '../../hdl-gen/lib/record';
import type { PortDirection } from '../verilator/port-spec';
import type { PortHandle, SimModel } from '../verilator/model';
import { decodeBigInt } from '../verilator/port-values';

/** A record layout as the generator's port list and manifest.json give it: fields least significant first. */
export interface PortRecord {
  readonly name: string;
  readonly fields: readonly { readonly name: string; readonly lo: number; readonly width: number }[];
}

/** An entry of a module's port list (hdl-gen/gen/generate.ts PortInfo), as far as records go. */
export interface PortListEntry {
  readonly name: string;
  readonly record?: PortRecord;
}

export type FieldScalar = number | bigint | boolean;
/** A field's value: a number, a bigint, octets (little-endian), or a record's subfields. */
export type FieldValue = FieldScalar | Uint8Array | { readonly [subfield: string]: FieldScalar };
/** A record to drive: fields not named keep the value they had. */
export type Fields = { readonly [field: string]: FieldValue | undefined };
/** A sampled field: a number up to 32 bits, a bigint above, a record's subfields as an object. */
export type SampledValue = number | bigint | { readonly [subfield: string]: number | bigint };
export type Sampled = { readonly [field: string]: SampledValue };

/** The camelCase of a snake_case name, as a type: `CamelCase<'add_swap_mask'>` is 'addSwapMask'. */
type CamelCase<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
/** A record to drive, its field names checked against the layout the block declares. */
export type FieldsOf<L extends Layout<string>> = L extends Layout<infer F> ? { readonly [K in F as CamelCase<K>]?: FieldValue } : never;
/** A sampled record, its field names those of the layout the block declares. */
export type SampledOf<L extends Layout<string>> = L extends Layout<infer F> ? { readonly [K in F as CamelCase<K>]: SampledValue } : never;

/** `addSwapMask` → `add_swap_mask`, `rxS0` → `rx_s0`. */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** `add_swap_mask` → `addSwapMask`, `rx_s0` → `rxS0`. */
export const camelCase = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export interface RecordGroupOptions {
  /** The module's port list with its records (the generator's, or manifest.json's). */
  readonly ports?: readonly PortListEntry[];
  /** Layouts of fields whose port the port list does not mark as a record (by field name). */
  readonly records?: { readonly [field: string]: Layout<string> };
  /**
   * The record the group carries, as the block declares it (hdl-gen/blocks/records.ts): every
   * field a port of its width, no other port but those `beside` it; nested records decode by it.
   */
  readonly layout?: Layout<string>;
  /** Fields of the group beside the layout's (the top's `qp`). */
  readonly beside?: readonly string[];
  /** The fields' direction: 'input' for a driver (default), 'output' for a monitor. */
  readonly direction?: PortDirection;
  /** Ports of the prefix that are not fields (default: `<prefix>_valid` and `<prefix>_ready`). */
  readonly exclude?: readonly string[];
}

/** The handshake of a record interface: port names, default `<prefix>_valid` and `<prefix>_ready`. */
export interface Handshake {
  readonly valid?: string;
  /** null: the interface has no ready (every transfer is taken at once, as on a configuration port). */
  readonly ready?: string | null;
}

export interface GroupField {
  readonly name: string;
  readonly port: PortHandle;
  readonly layout: Layout<string> | null;
}

const WORD_BITS = 32;

/** A Layout for a record the port list describes (its fields must tile the port from bit 0). */
function layoutOf(r: PortRecord): Layout<string> {
  const fields = [...r.fields].sort((a, b) => a.lo - b.lo);
  let lo = 0;
  for (const f of fields) {
    if (f.lo !== lo) throw new Error(`record ${r.name}: field ${f.name} starts at bit ${f.lo}, expected ${lo}`);
    lo += f.width;
  }
  return new Layout(r.name, Object.fromEntries(fields.map((f) => [f.name, f.width])));
}

/** The group's ports are the layout's fields (and those beside them), width for width. */
function checkLayout(model: SimModel, prefix: string, fields: readonly GroupField[], layout: Layout<string>, beside: readonly string[]): void {
  const ports = new Map(fields.map((f) => [snakeCase(f.name), f.port]));
  for (const f of layout.fields) {
    const port = ports.get(f.name);
    if (!port) throw new Error(`${model.top} has no port ${prefix}_${f.name} for field ${f.name} of record ${layout.name}`);
    if (port.width !== f.width) throw new Error(`${port.name} is ${port.width} bits, field ${f.name} of record ${layout.name} ${f.width}`);
  }
  const extra = [...ports.keys()].filter((n) => !layout.fields.some((f) => f.name === n) && !beside.includes(camelCase(n)));
  if (extra.length) throw new Error(`${model.top}: ${extra.map((n) => `${prefix}_${n}`).join(', ')} not in record ${layout.name}`);
}

const small = (width: number, v: bigint): number | bigint => (width <= WORD_BITS ? Number(v) : v);

/** A field's sampled value from its port's raw value: the number or bigint, or its record's subfields. */
function decodeField(f: GroupField, raw: number | bigint): SampledValue {
  if (!f.layout) return raw;
  const sub: Record<string, number | bigint> = {};
  const decoded = f.layout.decode(BigInt(raw));
  for (const x of f.layout.fields) sub[camelCase(x.name)] = small(x.width, decoded[x.name]!);
  return sub;
}

export class RecordGroup {
  readonly fields: readonly GroupField[];
  private readonly byName: ReadonlyMap<string, GroupField>;

  constructor(
    readonly model: SimModel,
    readonly prefix: string,
    opts: RecordGroupOptions = {},
  ) {
    const lead = `${prefix}_`;
    const direction = opts.direction ?? 'input';
    const skip = new Set(opts.exclude ?? [`${prefix}_valid`, `${prefix}_ready`]);
    const listed = new Map((opts.ports ?? []).map((p) => [p.name, p]));
    const fields: GroupField[] = [];
    for (const p of model.ports) {
      if (!p.name.startsWith(lead) || skip.has(p.name) || p.direction !== direction) continue;
      const name = camelCase(p.name.slice(lead.length));
      const rec = listed.get(p.name)?.record;
      const declared = opts.layout?.fields.find((f) => f.name === snakeCase(name))?.layout;
      const layout = opts.records?.[name] ?? declared ?? (rec ? layoutOf(rec) : null);
      if (layout && layout.width !== p.width) throw new Error(`${p.name} is ${p.width} bits, its record ${layout.name} ${layout.width}`);
      fields.push({ name, port: model.handle(p.name), layout });
    }
    if (fields.length === 0) throw new Error(`${model.top} has no ${direction} ports ${lead}*: is ${prefix} the right prefix?`);
    if (opts.layout) checkLayout(model, prefix, fields, opts.layout, opts.beside ?? []);
    this.fields = fields;
    this.byName = new Map(fields.map((f) => [f.name, f]));
  }

  field(name: string): GroupField {
    const f = this.byName.get(name);
    if (!f) throw new Error(`${this.model.top} has no port ${this.prefix}_${snakeCase(name)} for field '${name}' (fields: ${this.fields.map((x) => x.name).join(', ')})`);
    return f;
  }

  /** Drives the fields given; the others keep their values. */
  poke(values: Fields): void {
    for (const name in values) {
      const v = values[name];
      if (v !== undefined) this.pokeField(this.field(name), v);
    }
  }

  private pokeField(f: GroupField, v: FieldValue): void {
    const m = this.model;
    let value: number | bigint | Uint8Array;
    if (v instanceof Uint8Array || typeof v === 'number' || typeof v === 'bigint') value = v;
    else if (typeof v === 'boolean') value = v ? 1 : 0;
    else {
      if (!f.layout) throw new Error(`${f.port.name} holds no record: field '${f.name}' takes a number`);
      const sub: Record<string, bigint | number> = {};
      for (const k in v) sub[snakeCase(k)] = typeof v[k] === 'boolean' ? (v[k] ? 1 : 0) : (v[k] as number | bigint);
      value = f.layout.encode(sub);
    }
    if (typeof value === 'number' && f.port.width <= WORD_BITS) m.pokeNumber(f.port, value);
    else m.poke(f.port, value);
  }

  /**
   * Random values for `names`, drawn in that order (`r.bytes` of each port's octets, the top
   * octet cut to the port's width): noise on the fields a transfer does not use, which the DUT must
   * ignore.
   */
  random(r: { bytes(n: number): Uint8Array }, names: readonly string[]): Fields {
    const out: Record<string, Uint8Array> = {};
    for (const name of names) {
      const p = this.field(name).port;
      const b = r.bytes(p.octets);
      const spare = p.octets * 8 - p.width;
      if (spare) b[p.octets - 1]! &= 0xff >> spare;
      out[name] = b;
    }
    return out;
  }

  /** Every field at the last rising edge. */
  peekPre(): Sampled {
    const m = this.model;
    const out: Record<string, SampledValue> = {};
    for (const f of this.fields) out[f.name] = decodeField(f, f.port.width <= WORD_BITS ? m.peekPreNumber(f.port) : m.peekPre(f.port));
    return out;
  }

  /**
   * The fields from words laid out one port after another in field order, from `at` (a native
   * sink's log, sim/verilator/channel.ts): what `peekPre` gives for the same values.
   */
  decodeWords(words: Uint32Array, at: number): Sampled {
    const out: Record<string, SampledValue> = {};
    let i = at;
    for (const f of this.fields) {
      out[f.name] = decodeField(f, f.port.width <= WORD_BITS ? words[i]! : decodeBigInt(words, i, f.port.words));
      i += f.port.words;
    }
    return out;
  }

  /** The fields' words at the last rising edge, as one string: equal strings, equal payloads. */
  payloadPre(): string {
    const words = this.model.words;
    let s = '';
    for (const f of this.fields) for (let i = 0; i < f.port.words; i++) s += `${words[f.port.preOffset + i]!},`;
    return s;
  }
}
