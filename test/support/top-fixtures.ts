import { MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import type { QpConfig } from '../../sim/cosim/qp-config';
import type { LocalWr } from '../../sim/cosim/rx-peer';

/**
 * Directed tests of rnic_top: a QP context with plain MPA (CRC on, no markers, both streams from
 * sequence 0), IRD 4, first MSN 1 and MULPDU 1460; `over` sets what a test is about.
 */
export const plainQp = (over: Partial<QpConfig> = {}): QpConfig => ({
  pd: 1,
  ird: 4,
  ord: 4,
  msn: 1,
  mulpdu: 1460,
  maxUlpdu: MAX_ULPDU_LENGTH,
  bigEndian: false,
  rfc7306: true,
  crc: true,
  rx: { s0: 0, seq: 0, markers: false },
  tx: { s0: 0, seq: 0, markers: false },
  ...over,
});

/** An Immediate Data work request (RFC 7306 §6): eight octets of `id`, no memory read. */
export const immediate = (id: number): LocalWr => ({ wr: { kind: 'immediate', id, solicited: false, data: new Uint8Array(8).fill(id) }, addr: 0n, requestId: 0 });
