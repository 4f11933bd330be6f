import { Expr, checkWidth, type SignalLike } from './expr';
import { HdlError, callerLocation, type SourceLocation } from './location';

export type SignalRole = 'input' | 'output' | 'wire' | 'reg';

/** The record layout a signal holds (hdl-gen/lib/record.ts), for its documentation and the manifest. */
export interface RecordInfo {
  readonly name: string;
  readonly width: number;
  readonly fields: readonly { readonly name: string; readonly lo: number; readonly width: number }[];
  describe(): string;
}

/** A clock domain: registers update on the rising edge of `clock`, reset synchronously by `reset`. */
export interface Domain {
  readonly name: string;
  readonly clock: Signal;
  /** Active-high synchronous reset, or null for none. */
  readonly reset: Signal | null;
}

/** Leading underscores are reserved for names the emitter makes up (`_t0`, …). */
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;
/** Verilog-2005 keywords a signal must not be named (a subset that real designs hit). */
const KEYWORDS = new Set([
  'always', 'and', 'assign', 'begin', 'case', 'default', 'else', 'end', 'endcase', 'endmodule', 'for', 'function',
  'if', 'initial', 'inout', 'input', 'integer', 'localparam', 'module', 'nand', 'negedge', 'nor', 'not', 'or',
  'output', 'parameter', 'posedge', 'reg', 'signed', 'wire', 'xor', 'xnor', 'generate', 'genvar', 'task',
]);

export function checkName(name: string): void {
  if (!IDENTIFIER.test(name) || KEYWORDS.has(name)) throw new HdlError(`'${name}' is not a usable Verilog identifier`);
}

/**
 * A named signal of a module. As an Expr it reads the signal (for a register: its current value,
 * emitted as `<name>_reg`). Immutable; what drives it is recorded in the module.
 */
export class Signal extends Expr {
  readonly name: string;
  readonly role: SignalRole;
  readonly declared: SourceLocation | null;
  /** Registers: the value after reset (null: not reset) and the domain. */
  readonly resetValue: bigint | null;
  readonly domain: Domain | null;
  /** Ports: the interface group heading they are emitted under. */
  readonly group: string | null;
  /** Documentation emitted next to the declaration. */
  readonly doc: string | null;
  /** The record layout of the value, if it is one. */
  readonly record: RecordInfo | null;

  constructor(opts: {
    name: string;
    width: number;
    role: SignalRole;
    resetValue?: bigint | null;
    domain?: Domain | null;
    group?: string | null;
    doc?: string | null;
    record?: RecordInfo | null;
  }) {
    checkName(opts.name);
    checkWidth(opts.width);
    const declared = callerLocation();
    // The ref node points back at this signal, which exists only after super().
    const node: { kind: 'ref'; width: number; signal: SignalLike } = { kind: 'ref', width: opts.width, signal: null as unknown as SignalLike };
    super(node);
    node.signal = this;
    Object.freeze(node);
    this.name = opts.name;
    this.role = opts.role;
    this.declared = declared;
    this.resetValue = opts.resetValue ?? null;
    this.domain = opts.domain ?? null;
    this.group = opts.group ?? null;
    this.doc = opts.doc ?? null;
    this.record = opts.record ?? null;
    if (this.record && this.record.width !== opts.width) throw new HdlError(`'${opts.name}' is ${opts.width} bits, its record ${this.record.name} is ${this.record.width}`);
    Object.freeze(this);
  }
}
