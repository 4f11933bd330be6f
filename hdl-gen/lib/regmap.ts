import { HdlError } from '../core/location';
import { Layout, type Encoded } from './record';

/**
 * A register map of 32-bit words built from record layouts (hdl-gen/lib/record.ts), for an
 * AXI4-Lite slave (PG332's ERNIC register file, Corundum's AXI-Lite CSRs): no offset or bit
 * position is written by hand. Three kinds of register:
 *
 * - constants and status words (read-only), each a record of fields;
 * - a *staged port*: a valid/ready port of records (a QP's context, an STag entry) behind one
 *   register per field of its layout (a field wider than 32 bits takes consecutive words, least
 *   significant first) and a commit register. Writing the commit register (its own small record,
 *   e.g. the QP number) hands the staged fields and the commit value to the port: its valid rises
 *   until ready. A commit value at or above the port's `limit` is refused (SLVERR, nothing sent).
 *
 * The same object drives the RTL (hdl-gen/blocks/rnic-cfg-axil.ts), the documentation
 * (hdl-gen/gen/register-map-doc.ts) and the host's write sequences (`portWrites`).
 */
export const WORD_BITS = 32;
export const WORD_BYTES = WORD_BITS / 8;

/** AXI4 response codes (AXI spec A3.4.4): OKAY, SLVERR, DECERR. */
export const AXI_RESP = Object.freeze({ OKAY: 0, SLVERR: 2, DECERR: 3 });

export type Access = 'RO' | 'RW';

/** A field, or the part of a wide field, that a register holds. */
export interface RegisterField {
  /** The record field's name (lower_snake_case). */
  readonly name: string;
  /** Its bits in the register: [lo + width - 1 : lo]. */
  readonly lo: number;
  readonly width: number;
  /** The bits of the field this part holds start at fieldLo; the field is fieldWidth bits. */
  readonly fieldLo: number;
  readonly fieldWidth: number;
  /** Value of these bits after reset. */
  readonly reset: bigint;
  readonly doc: string | null;
  readonly ref: string | null;
}

export type RegisterRole =
  | { readonly kind: 'constant'; readonly value: bigint }
  | { readonly kind: 'status' }
  | { readonly kind: 'staged'; readonly port: string; readonly field: string; readonly part: number }
  | { readonly kind: 'commit'; readonly port: string };

export interface Register {
  /** UPPER_SNAKE_CASE: the name the documentation and the RTL's localparam (REG_<name>) use. */
  readonly name: string;
  /** Byte offset, a multiple of 4. */
  readonly offset: number;
  readonly access: Access;
  readonly doc: string;
  readonly fields: readonly RegisterField[];
  readonly role: RegisterRole;
}

/** A staged port as declared. */
export interface StagedPortSpec {
  /** Short name: the registers are <NAME>_COMMIT, <NAME>_<FIELD>; lower_snake_case. */
  readonly name: string;
  /** The port's signal prefix (<prefix>_valid, <prefix>_ready, <prefix>_<field>). */
  readonly prefix: string;
  /** Byte offset of the commit register; the field registers follow it. */
  readonly base: number;
  /** The record the port carries (one port per field). */
  readonly layout: Layout<string>;
  /**
   * The commit register's record (at most 32 bits): its fields are the layout's of the same name
   * and width (taken from the commit, not staged), or ports beside the layout (the QP).
   */
  readonly commit: Layout<string>;
  /** Commit values from here up are refused (SLVERR); at most 2^(the commit record's width). */
  readonly limit: bigint;
  readonly doc: string;
}

export interface StagedPort extends StagedPortSpec {
  /** The layout's fields that have registers of their own, in layout order. */
  readonly staged: readonly string[];
  readonly commitRegister: Register;
  /** The registers of each staged field, least significant word first. */
  readonly fieldRegisters: ReadonlyMap<string, readonly Register[]>;
}

export interface RegisterMap {
  readonly name: string;
  readonly doc: string;
  /** AXI4-Lite byte address bits. */
  readonly addrBits: number;
  readonly version: { readonly major: number; readonly minor: number };
  readonly registers: readonly Register[];
  readonly ports: readonly StagedPort[];
  /** The status register's record, if any (its fields are the block's to drive). */
  readonly status: { readonly register: Register; readonly layout: Layout<string> } | null;
}

/** A word write a host makes: byte address and data. */
export interface RegisterWrite {
  readonly offset: number;
  readonly data: number;
  /** The register's name, for logs. */
  readonly name: string;
}

const mask = (w: number): bigint => (1n << BigInt(w)) - 1n;
const upper = (s: string): string => s.toUpperCase();

/** Builds a map: constants and status words first, then staged ports, each at its own base. */
export class RegisterMapBuilder {
  private readonly regs: Register[] = [];
  private readonly ports: StagedPort[] = [];
  private status: RegisterMap['status'] = null;

  constructor(
    private readonly name: string,
    private readonly doc: string,
    private readonly addrBits: number,
    private readonly version: { readonly major: number; readonly minor: number },
  ) {}

  private add(r: Register): Register {
    if (r.offset % WORD_BYTES !== 0) throw new HdlError(`register ${r.name}: offset 0x${r.offset.toString(16)} is not word aligned`);
    if (r.offset >= 1 << this.addrBits) throw new HdlError(`register ${r.name}: offset 0x${r.offset.toString(16)} is beyond ${this.addrBits} address bits`);
    const clash = this.regs.find((x) => x.offset === r.offset || x.name === r.name);
    if (clash) throw new HdlError(`register ${r.name} at 0x${r.offset.toString(16)} collides with ${clash.name} at 0x${clash.offset.toString(16)}`);
    this.regs.push(r);
    return r;
  }

  /** A read-only word holding `values` of `layout` (at most 32 bits). */
  constant<F extends string>(name: string, offset: number, layout: Layout<F>, values: Encoded<F>, doc: string): Register {
    const value = layout.encode(values);
    return this.add({ name, offset, access: 'RO', doc, fields: wordFields(layout, value), role: { kind: 'constant', value } });
  }

  /** The read-only status word: `layout`'s fields are driven by the block. */
  statusWord<F extends string>(name: string, offset: number, layout: Layout<F>, doc: string): Register {
    if (this.status) throw new HdlError(`register map ${this.name} has a status register already`);
    const register = this.add({ name, offset, access: 'RO', doc, fields: wordFields(layout, 0n), role: { kind: 'status' } });
    this.status = { register, layout };
    return register;
  }

  /** A staged port: its commit register at `base`, then a register per staged field. */
  port(spec: StagedPortSpec): StagedPort {
    const P = upper(spec.name);
    if (spec.commit.width > WORD_BITS) throw new HdlError(`port ${spec.name}: the commit record ${spec.commit.name} is ${spec.commit.width} bits, above ${WORD_BITS}`);
    if (spec.limit < 1n || spec.limit > 1n << BigInt(spec.commit.width)) throw new HdlError(`port ${spec.name}: limit ${spec.limit} is outside 1..2^${spec.commit.width} (the commit record's range)`);
    for (const c of spec.commit.fields) {
      const f = spec.layout.fields.find((x) => x.name === c.name);
      if (f && f.width !== c.width) throw new HdlError(`port ${spec.name}: commit field ${c.name} is ${c.width} bits, the layout's ${f.width}`);
    }
    const commitRegister = this.add({
      name: `${P}_COMMIT`,
      offset: spec.base,
      access: 'RW',
      doc: `${spec.doc} Reads the last value committed.`,
      fields: wordFields(spec.commit, 0n),
      role: { kind: 'commit', port: spec.name },
    });
    const staged = spec.layout.fields.filter((f) => !spec.commit.fields.some((c) => c.name === f.name));
    const fieldRegisters = new Map<string, Register[]>();
    let offset = spec.base + WORD_BYTES;
    for (const f of staged) {
      const words = Math.ceil(f.width / WORD_BITS);
      const regs: Register[] = [];
      for (let k = 0; k < words; k++) {
        const width = Math.min(WORD_BITS, f.width - k * WORD_BITS);
        const suffix = words === 1 ? '' : words === 2 ? (k === 0 ? '_LO' : '_HI') : `_W${k}`;
        const part = words === 1 ? '' : ` bits [${k * WORD_BITS + width - 1}:${k * WORD_BITS}]`;
        regs.push(
          this.add({
            name: `${P}_${upper(f.name)}${suffix}`,
            offset,
            access: 'RW',
            doc: `${spec.name} ${f.name}${part}`,
            fields: [{ name: f.name, lo: 0, width, fieldLo: k * WORD_BITS, fieldWidth: f.width, reset: 0n, doc: f.doc, ref: f.ref }],
            role: { kind: 'staged', port: spec.name, field: f.name, part: k },
          }),
        );
        offset += WORD_BYTES;
      }
      fieldRegisters.set(f.name, regs);
    }
    const port: StagedPort = { ...spec, staged: staged.map((f) => f.name), commitRegister, fieldRegisters };
    this.ports.push(port);
    return port;
  }

  build(): RegisterMap {
    const registers = [...this.regs].sort((a, b) => a.offset - b.offset);
    return Object.freeze({ name: this.name, doc: this.doc, addrBits: this.addrBits, version: this.version, registers, ports: [...this.ports], status: this.status });
  }
}

/** The fields of a one-word record at their layout positions, with their value in `value`. */
function wordFields(layout: Layout<string>, value: bigint): RegisterField[] {
  if (layout.width > WORD_BITS) throw new HdlError(`record ${layout.name} is ${layout.width} bits: a register holds ${WORD_BITS}`);
  return layout.fields.map((f) => ({ name: f.name, lo: f.lo, width: f.width, fieldLo: 0, fieldWidth: f.width, reset: (value >> BigInt(f.lo)) & mask(f.width), doc: f.doc, ref: f.ref }));
}

export function portOf(map: RegisterMap, name: string): StagedPort {
  const p = map.ports.find((x) => x.name === name);
  if (!p) throw new Error(`register map ${map.name} has no port '${name}' (ports: ${map.ports.map((x) => x.name).join(', ')})`);
  return p;
}

export function registerNamed(map: RegisterMap, name: string): Register {
  const r = map.registers.find((x) => x.name === name);
  if (!r) throw new Error(`register map ${map.name} has no register ${name}`);
  return r;
}

/** The register at byte address `addr` (its low two bits ignored), or null: unmapped. */
export function registerAt(map: RegisterMap, addr: number): Register | null {
  const offset = (addr & ((1 << map.addrBits) - 1)) & ~(WORD_BYTES - 1);
  return map.registers.find((r) => r.offset === offset) ?? null;
}

/**
 * The writes that hand one record to staged port `name`: every staged field's words (fields not
 * given are 0), then the commit register with `commit`'s value. A host then waits for the port's
 * busy bit to clear before staging the next (the block holds writes to a busy port).
 */
export function portWrites(map: RegisterMap, name: string, fields: Encoded<string>, commit: Encoded<string>): RegisterWrite[] {
  const port = portOf(map, name);
  for (const k of Object.keys(fields)) {
    if (!port.staged.includes(k)) throw new Error(`port ${name}: '${k}' is not a staged field (staged: ${port.staged.join(', ')}; commit: ${port.commit.fields.map((f) => f.name).join(', ')})`);
  }
  const value = port.layout.encode(Object.fromEntries(Object.entries(fields).filter(([k]) => port.staged.includes(k))));
  const out: RegisterWrite[] = [];
  for (const f of port.staged) {
    const field = port.layout.field(f);
    const v = (value >> BigInt(field.lo)) & mask(field.width);
    for (const r of port.fieldRegisters.get(f)!) {
      const part = r.fields[0]!;
      out.push({ offset: r.offset, data: Number((v >> BigInt(part.fieldLo)) & mask(part.width)), name: r.name });
    }
  }
  out.push({ offset: port.commitRegister.offset, data: Number(port.commit.encode(commit)), name: port.commitRegister.name });
  return out;
}

/** A status word's bit for `field` (lowest bit of the field), to poll. */
export function statusBit(map: RegisterMap, field: string): { readonly offset: number; readonly mask: number } {
  if (!map.status) throw new Error(`register map ${map.name} has no status register`);
  const f = map.status.layout.field(field);
  return { offset: map.status.register.offset, mask: Number(mask(f.width) << BigInt(f.lo)) };
}
