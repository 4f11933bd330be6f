/**
 * CRC-32C for MPA (RFC 5044; spec/mpa.md §3): parameters, the fast software CRC with an
 * incremental API, the bit-serial reference, and the GF(2) matrices for hardware.
 */
import { crc32cEngine } from './table';

export { CRC32C, reflect, type CrcParams } from './params';
export { referenceCrc, referenceFinish, referenceUpdate } from './reference';
export { crc32cEngine, makeCrcEngine, type CrcEngine } from './table';
export { applyCrcMatrices, deriveCrcMatrices, deriveCrcMatrixSet, type CrcMatrices } from './matrices';

/** CRC-32C of `data[start, end)`. */
export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  return crc32cEngine.compute(data, start, end);
}

/** Incremental CRC-32C: `new Crc32c().update(a).update(b).digest()` = `crc32c(a ‖ b)`. */
export class Crc32c {
  private register = crc32cEngine.init;

  update(data: Uint8Array, start = 0, end = data.length): this {
    this.register = crc32cEngine.update(this.register, data, start, end);
    return this;
  }

  /** The CRC value of everything fed so far; feeding may go on afterwards. */
  digest(): number {
    return crc32cEngine.finish(this.register);
  }

  /** The raw register (equals `CRC32C.residue` after a message and its wire-order CRC). */
  get raw(): number {
    return this.register;
  }

  reset(): this {
    this.register = crc32cEngine.init;
    return this;
  }
}

/** The CRC field's four octets in wire order: least-significant octet first (spec/mpa.md §3.2). */
export function crcWireOctets(c: number): Uint8Array {
  return Uint8Array.of(c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, c >>> 24);
}

/** Writes the CRC field in wire order (least-significant octet first) at `at`. */
export function writeCrcField(buf: Uint8Array, at: number, c: number): void {
  buf[at] = c & 0xff;
  buf[at + 1] = (c >>> 8) & 0xff;
  buf[at + 2] = (c >>> 16) & 0xff;
  buf[at + 3] = c >>> 24;
}

/** Reads a CRC field in wire order (the inverse of `crcWireOctets`). */
export function readCrcField(buf: Uint8Array, at: number): number {
  return (buf[at]! | (buf[at + 1]! << 8) | (buf[at + 2]! << 16) | (buf[at + 3]! << 24)) >>> 0;
}
