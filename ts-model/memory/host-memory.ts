/**
 * Host memory as the RNIC sees it through its memory port: a sparse, byte-exact 64-bit address
 * space. Pages are allocated on first write; octets never written read as 0.
 */

/** Host addresses are 64 bits. */
export const ADDRESS_SPACE = 1n << 64n;
export const PAGE_SHIFT = 12;
/** 4 KiB pages: small enough to stay sparse, large enough that bulk copies dominate. */
export const PAGE_SIZE = 1 << PAGE_SHIFT;
const PAGE_OFFSET_MASK = BigInt(PAGE_SIZE - 1);
const U64_SIZE = 8;
const MAX_U64 = (1n << 64n) - 1n;

export type Endian = 'little' | 'big';

/**
 * FNV-1a 64-bit (Fowler/Noll/Vo, draft-eastlake-fnv): offset basis and prime. The model stays free
 * of node:crypto so it runs unchanged in a browser or any other JS host; the digest only needs to
 * be deterministic and to change with content, not to resist an adversary.
 */
const FNV64_OFFSET_HI = 0xcbf29ce4;
const FNV64_OFFSET_LO = 0x84222325;
/** The prime is 2^40 + 0x1B3: multiply by 0x1B3 and add the value shifted left by 40. */
const FNV64_PRIME_LOW = 0x1b3;
const FNV64_PRIME_SHIFT_IN_HI = 40 - 32;
const TWO_32 = 2 ** 32;
const HEX_PER_WORD = 8;

export class HostMemory {
  /** Keyed by page number (address >> 12); page numbers are < 2^52, exact as a number. */
  readonly #pages = new Map<number, Uint8Array>();

  write(address: bigint, data: Uint8Array): void {
    checkRange(address, data.length);
    let done = 0;
    let page = pageNumber(address);
    let offset = pageOffset(address);
    while (done < data.length) {
      const n = Math.min(PAGE_SIZE - offset, data.length - done);
      let p = this.#pages.get(page);
      if (p === undefined) {
        p = new Uint8Array(PAGE_SIZE);
        this.#pages.set(page, p);
      }
      p.set(data.subarray(done, done + n), offset);
      done += n;
      page += 1;
      offset = 0;
    }
  }

  read(address: bigint, length: number): Uint8Array {
    checkRange(address, length);
    const out = new Uint8Array(length);
    this.#forEachSpan(address, length, (p, offset, n, done) => {
      if (p !== undefined) out.set(p.subarray(offset, offset + n), done);
    });
    return out;
  }

  readU64(address: bigint, endian: Endian): bigint {
    const b = this.read(address, U64_SIZE);
    return new DataView(b.buffer, b.byteOffset, U64_SIZE).getBigUint64(0, endian === 'little');
  }

  writeU64(address: bigint, value: bigint, endian: Endian): void {
    if (value < 0n || value > MAX_U64) throw new RangeError(`${value} is not a 64-bit unsigned value`);
    const b = new Uint8Array(U64_SIZE);
    new DataView(b.buffer).setBigUint64(0, value, endian === 'little');
    this.write(address, b);
  }

  /** FNV-1a 64-bit over the octets of [address, address + length), as 16 hex digits. */
  digest(address: bigint, length: number): string {
    checkRange(address, length);
    let hi = FNV64_OFFSET_HI;
    let lo = FNV64_OFFSET_LO;
    const step = (octet: number): void => {
      lo = (lo ^ octet) >>> 0;
      // (hi:lo) × (2^40 + 0x1B3) mod 2^64 in 32-bit halves; every intermediate stays < 2^53.
      const low = lo * FNV64_PRIME_LOW;
      const carry = Math.floor(low / TWO_32);
      hi = (hi * FNV64_PRIME_LOW + carry + ((lo << FNV64_PRIME_SHIFT_IN_HI) >>> 0)) >>> 0;
      lo = low >>> 0;
    };
    this.#forEachSpan(address, length, (p, offset, n) => {
      if (p === undefined) for (let i = 0; i < n; i++) step(0);
      else for (let i = offset; i < offset + n; i++) step(p[i]!);
    });
    return hi.toString(16).padStart(HEX_PER_WORD, '0') + lo.toString(16).padStart(HEX_PER_WORD, '0');
  }

  /** Pages allocated so far (each written at least once). */
  pagesTouched(): number {
    return this.#pages.size;
  }

  /** Calls `fn` once per page-sized piece of the range; `p` is undefined for a page never written. */
  #forEachSpan(
    address: bigint,
    length: number,
    fn: (p: Uint8Array | undefined, offset: number, n: number, done: number) => void,
  ): void {
    let done = 0;
    let page = pageNumber(address);
    let offset = pageOffset(address);
    while (done < length) {
      const n = Math.min(PAGE_SIZE - offset, length - done);
      fn(this.#pages.get(page), offset, n, done);
      done += n;
      page += 1;
      offset = 0;
    }
  }
}

function checkRange(address: bigint, length: number): void {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`length ${length} is not a non-negative integer`);
  if (address < 0n) throw new RangeError(`address ${address} is negative`);
  if (address + BigInt(length) > ADDRESS_SPACE) {
    throw new RangeError(`[0x${address.toString(16)}, +${length}) passes the top of the 64-bit address space`);
  }
}

const pageNumber = (address: bigint): number => Number(address >> BigInt(PAGE_SHIFT));
const pageOffset = (address: bigint): number => Number(address & PAGE_OFFSET_MASK);
