import { rnicRegisterMap, type RegMapConfig } from '../../hdl-gen/blocks/rnic-regmap';
import { portWrites, statusBit, type RegisterMap } from '../../hdl-gen/lib/regmap';
import type { ConnectionResult } from '../../ts-model/mpa/connection';
import { snakeCase } from '../cocotb/record-group';
import { qpConfigFields, type QpConfig } from '../cosim/qp-config';
import type { RtlRegion } from '../cosim/rx-peer';
import { stagEntry } from '../cosim/stag-cfg';

/**
 * The host side of rnic_top_axil's register map (hdl-gen/blocks/rnic-regmap.ts): a QP's
 * connection as the model's MPA negotiation set it up (ts-model/mpa/connection.ts), and STag table
 * entries, as the AXI4-Lite operations a driver makes: the staged fields' writes, the commit, and
 * a poll of STATUS until the port has handed the record to rnic_top. Addresses and data come from
 * the register map, which the RTL is generated from.
 */

/** One operation of a host program on the AXI4-Lite port. */
export type AxilOp =
  | { readonly kind: 'write'; readonly addr: number; readonly data: number; readonly name: string }
  /** Read `addr` until `(data & mask) === value`. */
  | { readonly kind: 'poll'; readonly addr: number; readonly mask: number; readonly value: number; readonly name: string };

/** What the ULP chooses for a QP beside what MPA negotiates. */
export interface QpParams {
  readonly pd: number;
  /** First MSN of every queue (RFC 5041 §5.1). */
  readonly msn: number;
  /** Largest ULPDU this side sends (MULPDU, spec/mpa.md §5). */
  readonly mulpdu: number;
  /** Largest ULPDU_Length accepted (maxUlpduLength). */
  readonly maxUlpdu: number;
  readonly bigEndian: boolean;
  readonly rfc7306: boolean;
}

/**
 * The QP context of one side of an established MPA connection: IRD and ORD as that side has them
 * in force, CRC as negotiated (either frame's C, spec/mpa.md §3.4), each direction's S0 and
 * markers (the receiver's M, §4.2), the first FPDU of each direction at its S0 (full operation
 * starts right after the frames, §7.4), and MPA fencing for the responder (RFC 6581 §3: it sends
 * nothing before the initiator's first FPDU).
 */
export function negotiatedQpConfig(conn: ConnectionResult, side: 'initiator' | 'responder', p: QpParams): QpConfig {
  if (conn.status !== 'established') throw new Error(`the MPA connection is ${conn.status}${conn.error ? ` (${conn.error.reason})` : ''}: nothing to load`);
  const [rx, tx] = side === 'initiator' ? [conn.responderToInitiator, conn.initiatorToResponder] : [conn.initiatorToResponder, conn.responderToInitiator];
  return {
    ...p,
    ird: conn[side].ird,
    ord: conn[side].ord,
    crc: conn.crc,
    rx: { s0: rx.s0, seq: rx.s0, markers: rx.markers },
    tx: { s0: tx.s0, seq: tx.s0, markers: tx.markers },
    fence: side === 'responder',
  };
}

/** The map of a generated top, from its parameters (width, QPs, STag depth). */
export function registerMapOf(c: RegMapConfig): RegisterMap {
  return rnicRegisterMap(c);
}

const snakeFields = (fields: Record<string, number | bigint | boolean>): Record<string, number | bigint> =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [snakeCase(k), typeof v === 'boolean' ? (v ? 1 : 0) : v]));

/** Reads STATUS until the port's busy bit is 0: the record has gone to rnic_top. */
function untilTaken(map: RegisterMap, port: string): AxilOp {
  const { offset, mask } = statusBit(map, `${port}_busy`);
  return { kind: 'poll', addr: offset, mask, value: 0, name: `STATUS.${port}_busy` };
}

/** Loads QP `qp` with `c` (a new connection): its QP_* fields, QP_COMMIT, then STATUS until taken. */
export function qpConfigWrites(map: RegisterMap, qp: number, c: QpConfig): AxilOp[] {
  const { qp: _qp, ...fields } = qpConfigFields(qp, c);
  const writes = portWrites(map, 'qp', snakeFields(fields), { qp });
  return [...writes.map((w): AxilOp => ({ kind: 'write', addr: w.offset, data: w.data, name: w.name })), untilTaken(map, 'qp')];
}

/** Registers (or, with `enable: false`, invalidates) an STag table entry: STAG_* fields, STAG_COMMIT with the STag, STATUS. */
export function stagEntryWrites(map: RegisterMap, g: RtlRegion & { readonly enable?: boolean }): AxilOp[] {
  const { index, key, ...fields } = stagEntry(g);
  const writes = portWrites(map, 'stag', snakeFields(fields), { index, key });
  return [...writes.map((w): AxilOp => ({ kind: 'write', addr: w.offset, data: w.data, name: w.name })), untilTaken(map, 'stag')];
}
