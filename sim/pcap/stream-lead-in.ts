import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { MARKER_PERIOD, MARKER_SIZE, MpaFramer, markerPhase, type MpaStreamConfig } from '../../ts-model/mpa';
import { seqDiff } from '../../ts-model/mpa/sequence';

/**
 * Where a capture of an MPA direction starts full operation when the recorded stream does not
 * start at S0 (a co-simulation starts its streams anywhere after S0), and what fills the octets
 * from there to the stream's first one.
 *
 * Markers lie at S0 + 512·n (spec/mpa.md §4.3), so without them S0 is nothing to the octets and the
 * capture starts full operation right at the stream; with them it starts at the last marker
 * position at or before the stream, or a period or two earlier where no FPDU fits the gap
 * (S0 + 512·n: the same marker positions; all the RTL keeps of S0 is its low 9 bits), and FPDUs
 * carrying zero-filled ULPDUs take the octets in between, the
 * connection's earlier traffic, which no one recorded. Wireshark needs both (spec/mpa.md §9):
 * its MPA dissector counts markers from the first FPDU after the MPA Reply, and reads the stream
 * as whole FPDUs (a gap or a partial FPDU leaves the rest of the direction undecoded).
 */
export interface LeadIn {
  /** S0 of the capture: the MPA Request or Reply ends here. */
  readonly s0: number;
  /** TCP payloads from `s0` up to the stream's first octet, in order. */
  readonly segments: readonly Uint8Array[];
}

/** A filler ULPDU holds at least a DDP header (all zero: DV 0, no message), so Wireshark shows it whole. */
const FILLER_ULPDU_MIN = UNTAGGED_HEADER_SIZE;
/** Marker periods a filler may reach back to find an FPDU of its exact length. */
const MAX_PERIODS_BACK = 2;

/** One FPDU framed at `s0` of exactly `length` wire octets, or null if no ULPDU length gives it. */
function fillerFpdu(d: MpaStreamConfig, s0: number, length: number): Uint8Array | null {
  // The wire length grows with the ULPDU's: from the largest that could fit down.
  for (let u = length; u >= FILLER_ULPDU_MIN; u--) {
    const wire = new MpaFramer({ ...d, s0, seq: s0 }).frame(new Uint8Array(u)).wire;
    if (wire.length === length) return wire;
    if (wire.length < length) return null;
  }
  return null;
}

export function leadIn(d: MpaStreamConfig): LeadIn {
  const seq = d.seq ?? d.s0;
  const phase = markerPhase(seq, d.s0);
  if (!d.markers || phase === 0) return { s0: seq, segments: [] };
  for (let back = 0; back <= MAX_PERIODS_BACK; back++) {
    const s0 = seqDiff(seq, phase + back * MARKER_PERIOD);
    const fpdu = fillerFpdu(d, s0, phase + back * MARKER_PERIOD);
    if (fpdu) return { s0, segments: [fpdu] };
  }
  // Four octets past a marker position: no FPDU ends there, its last four octets would be the
  // marker. The filler ends at the marker position and the marker (as a framer puts it there)
  // follows on its own; Wireshark 4.0.17, which counts a marker at an FPDU's end as that FPDU's,
  // takes it as the filler's last octets and reads the stream from its first FPDU
  // (docs/interpretation.md).
  const s0 = seqDiff(seq, MARKER_SIZE + MARKER_PERIOD);
  const fpdu = fillerFpdu(d, s0, MARKER_PERIOD);
  if (!fpdu) throw new Error(`internal: no filler FPDU of ${MARKER_PERIOD} octets`);
  const marker = new MpaFramer({ ...d, s0, seq: seqDiff(seq, MARKER_SIZE) }).frame(new Uint8Array(FILLER_ULPDU_MIN)).wire.slice(0, MARKER_SIZE);
  return { s0, segments: [fpdu, marker] };
}
