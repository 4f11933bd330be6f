import { TAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import type { FramedFpdu } from '../../ts-model/mpa/framer';
import { corruptCrc, corruptMarker } from '../../ts-model/mpa/faults';
import { Opcode, OPCODE_NAMES } from '../../ts-model/rdmap/constants';
import { LlpError } from '../../ts-model/terminate-codes';
import type { Prng } from '../../ts-model/util/prng';

/**
 * The peer's traffic as it goes on the wire into the receive path and the top: the FPDU of a ULPDU
 * with the step's MPA fault, cut into TCP segments; and what the coverage counts of a ULPDU.
 */

/** The opcode a ULPDU is counted under, or why it has none. */
export function opcodeName(u: Uint8Array): string {
  const op = u.length >= 2 ? u[1]! & 0xf : -1;
  return op < 0 ? 'ULPDU shorter than 2 octets' : OPCODE_NAMES[op] ?? `undefined opcode 0x${op.toString(16)}`;
}

/** The data octets of a tagged ULPDU (RDMA Write, Read Response) that carries any; else 0. */
export function taggedPayload(u: Uint8Array): number {
  const op = u.length >= 2 ? u[1]! & 0xf : -1;
  return u.length > TAGGED_HEADER_SIZE && (op === Opcode.WRITE || op === Opcode.READ_RESPONSE) ? u.length - TAGGED_HEADER_SIZE : 0;
}

/**
 * The wire octets of `f`, failed as MPA's `mpaError` says (LLP 0x02: a CRC bit flipped, when the
 * FPDU has a CRC; otherwise a marker's FPDUPTR, one drawn from `r`); unchanged without an error or
 * without the field to corrupt.
 */
export function faultyWire(f: FramedFpdu, mpaError: number | null, crc: boolean, r: Prng): Uint8Array {
  if (mpaError === null) return f.wire;
  if (mpaError === LlpError.CRC.code && f.crcOffset >= 0 && crc) return corruptCrc(f);
  return f.markers.length ? corruptMarker(f, crc, r.int(0, f.markers.length - 1)) : f.wire;
}

/** TCP segments of 1..4W octets (MPA ignores their boundaries), drawn from `r`. */
export function tcpSegments(wire: Uint8Array, r: Prng, W: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < wire.length; ) {
    const n = Math.min(wire.length - at, r.int(1, 4 * W));
    out.push(wire.subarray(at, at + n));
    at += n;
  }
  return out;
}
