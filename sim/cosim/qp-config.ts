import { setUpConnection, type ConnectionResult, type MpaStreamConfig } from '../../ts-model/mpa';
import { IRD_ORD_NO_NEGOTIATE } from '../../ts-model/mpa/constants';
import { mpaOptions } from '../../ts-model/mpa/options';
import { seqDiff } from '../../ts-model/mpa/sequence';

/**
 * A QP's context as rnic_top's configuration port loads it (hdl-gen/blocks/rnic-top.ts, cfg_*),
 * the two MPA streams of the model that go with it, and the MPA Request and Reply that set its
 * connection up (for the failure captures). One place for the field-to-port mapping:
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

/**
 * The MPA Request and Reply that set up QP c's connection (RFC 6581 §6, §9; spec/mpa.md §7, §8),
 * as the model's negotiation makes them: the peer is the initiator and asks for markers in what
 * the RTL sends (c.tx.markers), the RTL is the responder and asks for them in what it receives
 * (c.rx.markers), both ask for CRC as the QP has it, and the Reply carries the RTL's IRD and ORD.
 * Full operation starts with the octet after each frame (spec/mpa.md §4.3), so each frame ends at
 * its direction's S0 and the ISNs follow from it.
 */
export function qpStartup(c: QpConfig): ConnectionResult {
  const setup = (initiatorIsn: number, responderIsn: number) =>
    setUpConnection({
      // The peer reads no more than the RTL takes (its ORD is the RTL's IRD); its IRD is not negotiated.
      initiator: { markers: c.tx.markers, crc: c.crc, ird: IRD_ORD_NO_NEGOTIATE, ord: c.ird, rtr: [] },
      responder: { markers: c.rx.markers, crc: c.crc, ird: c.ird, ord: c.ord },
      initiatorIsn,
      responderIsn,
    });
  // The frames' lengths do not depend on the ISNs: measure them, then place them (the SYN takes one number).
  const probe = setup(0, 0);
  const conn = setup(seqDiff(c.rx.s0, probe.request.octets.length + 1), seqDiff(c.tx.s0, (probe.reply?.octets.length ?? 0) + 1));
  const rx = conn.initiatorToResponder;
  const tx = conn.responderToInitiator;
  if (conn.status !== 'established' || rx.s0 !== c.rx.s0 || tx.s0 !== c.tx.s0 || rx.markers !== c.rx.markers || tx.markers !== c.tx.markers || conn.crc !== c.crc) {
    throw new Error(`internal: the MPA set-up of a QP does not give its configuration (${conn.status}, S0 0x${rx.s0.toString(16)}/0x${tx.s0.toString(16)})`);
  }
  return conn;
}
