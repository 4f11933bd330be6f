/**
 * The AXI4-Stream signals of one interface, found by prefix (`s_axis` → s_axis_tdata, …).
 * tdata, tvalid and tready are required; tkeep, tlast and tuser are used when present.
 * `userSignal` puts another sideband signal in tuser's place (`tid` for a stream that names its
 * connection per beat), so drivers and monitors carry it per beat and per packet as they do tuser.
 */
import type { PortHandle, SimModel } from '../verilator/model';

export interface AxisBus {
  readonly prefix: string;
  readonly tdata: PortHandle;
  readonly tvalid: PortHandle;
  readonly tready: PortHandle;
  readonly tkeep: PortHandle | undefined;
  readonly tlast: PortHandle | undefined;
  readonly tuser: PortHandle | undefined;
  /** Octets per beat (tdata width / 8). */
  readonly octets: number;
}

const OCTET_BITS = 8;

export function axisBus(model: SimModel, prefix: string, userSignal = 'tuser'): AxisBus {
  const optional = (signal: string): PortHandle | undefined => (model.has(`${prefix}_${signal}`) ? model.handle(`${prefix}_${signal}`) : undefined);
  const tdata = model.handle(`${prefix}_tdata`);
  const tvalid = model.handle(`${prefix}_tvalid`);
  const tready = model.handle(`${prefix}_tready`);
  const tkeep = optional('tkeep');
  if (tdata.width % OCTET_BITS !== 0) throw new Error(`${tdata.name} is ${tdata.width} bits: AXI-Stream drivers need whole octets`);
  const octets = tdata.width / OCTET_BITS;
  if (tkeep && tkeep.width !== octets) throw new Error(`${tkeep.name} is ${tkeep.width} bits but ${tdata.name} has ${octets} octets`);
  for (const h of [tvalid, tready, optional('tlast')]) {
    if (h && h.width !== 1) throw new Error(`${h.name} must be 1 bit, is ${h.width}`);
  }
  return { prefix, tdata, tvalid, tready, tkeep, tlast: optional('tlast'), tuser: optional(userSignal), octets };
}

/** tuser as a number when it fits 32 bits (the usual error flag), else a bigint. */
export type AxisUser = number | bigint;

/** One transfer as it crossed the interface. */
export interface AxisBeat {
  /** All `octets` lanes of tdata, little-endian (lane 0 = tdata[7:0]). */
  readonly data: Uint8Array;
  readonly tkeep: bigint;
  readonly tlast: boolean;
  readonly tuser: AxisUser;
}

/** A packet: the octets of its beats whose tkeep bit was set, and tuser of its last beat. */
export interface AxisFrame {
  readonly data: Uint8Array;
  readonly tuser: AxisUser;
  /** The model's cycle count when its last beat was taken (where the sink records it). */
  readonly cycle?: number;
}

const WORD_BITS = 32;

/** Reads tuser at `preOffset` (the value at the last rising edge), or 0 when there is no tuser. */
export function readUserPre(model: SimModel, tuser: PortHandle | undefined): AxisUser {
  if (!tuser) return 0;
  return tuser.width <= WORD_BITS ? model.peekPreNumber(tuser) : model.peekPre(tuser);
}
