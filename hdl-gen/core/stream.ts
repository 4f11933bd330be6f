import type { ModuleBuilder } from './module';
import type { RecordInfo, Signal } from './signal';
import { HdlError } from './location';

/**
 * A valid/ready stream with data, keep, last and user (Chisel's Decoupled and SpinalHDL's Stream
 * with Fragment), lowered to AXI4-Stream port names so the blocks drop into Corundum- or
 * Vivado-style designs: `s_axis_*` where the module receives, `m_axis_*` where it sends.
 */
export interface StreamSpec {
  /** tdata octets. */
  readonly bytes: number;
  /** tkeep, one bit per octet (default on). */
  readonly keep?: boolean;
  /** tlast (default on). */
  readonly last?: boolean;
  /** tuser bits (default 0: none). */
  readonly user?: number;
  /** tid bits (default 0: none), e.g. the QP a beat belongs to. */
  readonly id?: number;
}

export type StreamRole = 'sink' | 'source';

/** A stream type with a direction; `flip()` gives the other end. */
export class StreamType {
  constructor(
    readonly spec: StreamSpec,
    readonly role: StreamRole,
  ) {
    if (!Number.isInteger(spec.bytes) || spec.bytes < 1) throw new HdlError(`stream data width must be a positive number of octets, got ${spec.bytes}`);
    Object.freeze(this);
  }

  flip(): StreamType {
    return new StreamType(this.spec, this.role === 'sink' ? 'source' : 'sink');
  }

  /** Declares the ports of this stream on `m` under `prefix` (default s_axis / m_axis). */
  /** `userRecord`: the layout tuser carries (its documentation and the manifest's). */
  declare(m: ModuleBuilder, prefix = this.role === 'sink' ? 's_axis' : 'm_axis', group?: string, userRecord?: RecordInfo): Stream {
    const inward = this.role === 'sink';
    const label = group ?? `AXI4-Stream ${inward ? 'input' : 'output'} (${prefix})`;
    const port = (name: string, width: number, fromOutside: boolean) => {
      const opts = { group: label, ...(name === 'tuser' && userRecord && { record: userRecord }) };
      return fromOutside ? m.input(`${prefix}_${name}`, width, opts) : m.output(`${prefix}_${name}`, width, opts);
    };
    const { bytes, keep = true, last = true, user = 0, id = 0 } = this.spec;
    return Object.freeze({
      type: this,
      prefix,
      data: port('tdata', 8 * bytes, inward),
      keep: keep ? port('tkeep', bytes, inward) : null,
      valid: port('tvalid', 1, inward),
      ready: port('tready', 1, !inward),
      last: last ? port('tlast', 1, inward) : null,
      id: id ? port('tid', id, inward) : null,
      user: user ? port('tuser', user, inward) : null,
    });
  }
}

export interface Stream {
  readonly type: StreamType;
  readonly prefix: string;
  readonly data: Signal;
  readonly keep: Signal | null;
  readonly valid: Signal;
  readonly ready: Signal;
  readonly last: Signal | null;
  readonly id: Signal | null;
  readonly user: Signal | null;
}

export const sinkStream = (spec: StreamSpec): StreamType => new StreamType(spec, 'sink');
export const sourceStream = (spec: StreamSpec): StreamType => new StreamType(spec, 'source');
