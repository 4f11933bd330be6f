/**
 * The AXI4-Stream signals of one interface, found by prefix (`s_axis` → s_axis_tdata, …).
 * tdata, tvalid and tready are required; tkeep, tlast, tuser and tid are used when present. TID
 * (ARM IHI 0051, §2.1: the data stream identifier) names the stream a packet belongs to, a QP for
 * the top; tuser stays the packet's sideband (an error flag, a length), so the two travel apart.
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
  readonly tid: PortHandle | undefined;
  /** Octets per beat (tdata width / 8). */
  readonly octets: number;
}

const OCTET_BITS = 8;
const WORD_BITS = 32;

export function axisBus(model: SimModel, prefix: string): AxisBus {
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
  const tid = optional('tid');
  if (tid && tid.width > WORD_BITS) throw new Error(`${tid.name} is ${tid.width} bits: drivers carry a TID of at most ${WORD_BITS}`);
  return { prefix, tdata, tvalid, tready, tkeep, tlast: optional('tlast'), tuser: optional('tuser'), tid, octets };
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
  /** TID (0 where the interface has none). */
  readonly tid: number;
}

/** A packet: the octets of its beats whose tkeep bit was set, and tuser and tid of its last beat. */
export interface AxisFrame {
  readonly data: Uint8Array;
  readonly tuser: AxisUser;
  /** TID (0 where the interface has none). */
  readonly tid: number;
  /** The model's cycle count when its last beat was taken (where the sink records it). */
  readonly cycle?: number;
}

/** Reads tuser at `preOffset` (the value at the last rising edge), or 0 when there is no tuser. */
export function readUserPre(model: SimModel, tuser: PortHandle | undefined): AxisUser {
  if (!tuser) return 0;
  return tuser.width <= WORD_BITS ? model.peekPreNumber(tuser) : model.peekPre(tuser);
}

/** Reads tid at `preOffset`, or 0 when there is no tid. */
export function readIdPre(model: SimModel, tid: PortHandle | undefined): number {
  return tid ? model.peekPreNumber(tid) : 0;
}
