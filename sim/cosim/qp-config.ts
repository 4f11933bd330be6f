import type { MpaStreamConfig } from '../../ts-model/mpa';
import { mpaOptions } from '../../ts-model/mpa/options';

/**
 * A QP's context as rnic_top's configuration port loads it (hdl-gen/blocks/rnic-top.ts, cfg_*),
 * and the two MPA streams of the model that go with it. One place for the field-to-port mapping:
 * every harness of the top configures QPs with `qpConfigFields`.
 */
export interface QpConfig {
  readonly pd: number;
  readonly ird: number;
  /** Outbound Reads/Atomics outstanding (cfg_ord); 0x3FFF: only the ORQ depth limits them. */
  readonly ord: number;
  readonly msn: number;
  /** Largest ULPDU this QP sends (MULPDU). */
  readonly mulpdu: number;
  /** Largest ULPDU_Length it accepts (maxUlpduLength, spec/mpa.md §6 step 2). */
  readonly maxUlpdu: number;
  readonly bigEndian: boolean;
  /** RFC 7306 opcodes accepted. */
  readonly rfc7306: boolean;
  /** CRC-32C, negotiated once for both directions (spec/mpa.md §3.4). */
  readonly crc: boolean;
  /**
   * The two directions (RFC 5044 §4.5): S0 of the side that sends, the sequence number of the
   * first octet, and markers, which each side asks for in what it receives (spec/mpa.md §4.2).
   */
  readonly rx: MpaDirection;
  readonly tx: MpaDirection;
  /** MPA fencing (cfg_fence): the responder sends nothing before the peer's first FPDU (RFC 6581 §3). */
  readonly fence?: boolean;
}

export interface MpaDirection {
  readonly s0: number;
  readonly seq: number;
  readonly markers: boolean;
}

/** The MPA sequence numbers the RTL keeps: their low 9 bits (a marker period is 512 octets). */
export const SEQ_LOW_BITS = 0x1ff;

/** The configuration port's fields (cfg_*) that load QP `qp` with `c`. */
export function qpConfigFields(qp: number, c: QpConfig) {
  return {
    qp, rfc7306: c.rfc7306, pd: c.pd, ird: c.ird, ord: c.ord, initialMsn: c.msn >>> 0, mulpdu: c.mulpdu, maxUlpdu: c.maxUlpdu, bigEndian: c.bigEndian,
    crc: c.crc, rxMarkers: c.rx.markers, txMarkers: c.tx.markers, fence: c.fence ?? false,
    rxS0: c.rx.s0 & SEQ_LOW_BITS, rxSeq: c.rx.seq & SEQ_LOW_BITS, txS0: c.tx.s0 & SEQ_LOW_BITS, txSeq: c.tx.seq & SEQ_LOW_BITS,
  };
}

/** The model's MPA streams of a QP: what it receives (checked against maxUlpduLength) and sends. */
export function qpStreams(c: QpConfig): { readonly rx: MpaStreamConfig; readonly tx: MpaStreamConfig } {
  return {
    rx: { s0: c.rx.s0, seq: c.rx.seq, markers: c.rx.markers, crc: c.crc, options: mpaOptions({ maxUlpduLength: c.maxUlpdu }) },
    tx: { s0: c.tx.s0, seq: c.tx.seq, markers: c.tx.markers, crc: c.crc },
  };
}
