import type { CrcParams } from './params';
import { reflect } from './params';

/**
 * Bit-serial CRC straight from the parameter definition. Slow and obviously right: the
 * independent oracle for the table-driven CRC and the basis from which the hardware update
 * matrices are derived (spec/mpa.md §3.1).
 *
 * The register is kept in the domain the table-driven code uses: for a reflected CRC, bit 0 is
 * the coefficient of x^31 (the next bit to leave); for a normal CRC, bit 31 is.
 */
export function referenceUpdate(p: CrcParams, register: number, data: Uint8Array): number {
  let reg = register >>> 0;
  if (p.reflectIn) {
    const poly = reflect(p.poly, 32);
    for (const octet of data) {
      reg ^= octet;
      for (let b = 0; b < 8; b++) reg = reg & 1 ? (reg >>> 1) ^ poly : reg >>> 1;
    }
  } else {
    for (const octet of data) {
      reg ^= octet << 24;
      for (let b = 0; b < 8; b++) reg = reg & 0x80000000 ? (reg << 1) ^ p.poly : reg << 1;
    }
  }
  return reg >>> 0;
}

/** Raw register → CRC value (reflectOut, xorOut); the register domain above already reflects. */
export function referenceFinish(p: CrcParams, register: number): number {
  const r = p.reflectIn === p.reflectOut ? register : reflect(register, 32);
  return (r ^ p.xorOut) >>> 0;
}

export function referenceCrc(p: CrcParams, data: Uint8Array): number {
  return referenceFinish(p, referenceUpdate(p, p.init, data));
}
