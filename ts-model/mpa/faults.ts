import { crc32cEngine, crcWireOctets } from '../crc32c';
import { MARKER_SIZE } from './constants';
import type { FramedFpdu } from './framer';

/**
 * Wire faults for tests and scenarios: each returns a corrupted copy of an FPDU's wire octets
 * that trips exactly one receive check (spec/mpa.md §6), so the expected Terminate is known.
 */

/** Flips a bit of the CRC field: 2/0/0x02 when CRC is on. */
export function corruptCrc(fpdu: FramedFpdu): Uint8Array {
  const wire = fpdu.wire.slice();
  wire[fpdu.crcOffset]! ^= 0x01;
  return wire;
}

/**
 * Changes the FPDUPTR of the FPDU's `which`-th marker and, when CRC is on, recomputes the CRC so
 * that the CRC check passes and the marker check (2/0/0x03) is the one that fails.
 */
export function corruptMarker(fpdu: FramedFpdu, crc: boolean, which = 0): Uint8Array {
  const marker = fpdu.markers[which];
  if (!marker) throw new RangeError(`the FPDU has ${fpdu.markers.length} markers, no marker ${which}`);
  const wire = fpdu.wire.slice();
  // Keep it a multiple of 4 and different: pointing 4 octets further back.
  const bad = (marker.fpduptr + 4) & 0xffff;
  wire[marker.wireOffset + 2] = bad >>> 8;
  wire[marker.wireOffset + 3] = bad & 0xff;
  if (crc && marker.wireOffset + MARKER_SIZE > fpdu.crcSpanStart) {
    wire.set(crcWireOctets(crc32cEngine.compute(wire, fpdu.crcSpanStart, fpdu.crcOffset)), fpdu.crcOffset);
  }
  return wire;
}

/** Flips a bit of the ULPDU: with CRC on, 2/0/0x02. */
export function corruptPayload(fpdu: FramedFpdu, at = 0): Uint8Array {
  const wire = fpdu.wire.slice();
  const headerEnd = fpdu.markers.some((m) => m.leading) ? MARKER_SIZE + 2 : 2;
  wire[Math.min(headerEnd + at, fpdu.crcOffset - 1)]! ^= 0x80;
  return wire;
}
