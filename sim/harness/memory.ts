/**
 * Host memory as the testbench's memory ports see it: octets read and written at 64-bit
 * addresses. ts-model's HostMemory (sparse, byte-exact) is one; `BackgroundMemory` another, for
 * the transmit tests, where every address already holds a value.
 */
export interface Memory {
  read(addr: bigint, n: number): Uint8Array;
  write(addr: bigint, data: Uint8Array): void;
}

const MASK64 = (1n << 64n) - 1n;

/** The background octet at (hi:lo), a hash of the address. */
function background(lo: number, hi: number): number {
  let x = (lo ^ Math.imul(hi, 0x9e3779b1)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) & 0xff;
}

/**
 * Every octet has a fixed pseudo-random value (a hash of its address), so any address reads as
 * data without storage; the 8-octet words written since are kept apart (keyed by their aligned
 * address), so a test sees what changed.
 */
export class BackgroundMemory implements Memory {
  readonly words = new Map<bigint, Uint8Array>();

  clone(): BackgroundMemory {
    const c = new BackgroundMemory();
    for (const [a, w] of this.words) c.words.set(a, w.slice());
    return c;
  }

  read(addr: bigint, n: number): Uint8Array {
    const out = new Uint8Array(n);
    let lo = Number(addr & 0xffffffffn);
    let hi = Number((addr >> 32n) & 0xffffffffn);
    for (let i = 0; i < n; i++) {
      out[i] = background(lo, hi);
      if (++lo === 0x100000000) {
        lo = 0;
        hi = (hi + 1) >>> 0;
      }
    }
    const end = addr + BigInt(n);
    for (const [a, w] of this.words) {
      if (a + 8n <= addr || a >= end) continue;
      for (let k = 0; k < 8; k++) {
        const at = a + BigInt(k) - addr;
        if (at >= 0n && at < BigInt(n)) out[Number(at)] = w[k]!;
      }
    }
    return out;
  }

  /** Writes the octets of `data` whose `strb(k)` holds (default: all). */
  write(addr: bigint, data: Uint8Array, strb: (k: number) => boolean = () => true): void {
    for (let k = 0; k < data.length; k++) {
      if (!strb(k)) continue;
      const a = (addr + BigInt(k)) & MASK64;
      const base = a & ~7n;
      const word = this.words.get(base) ?? this.read(base, 8);
      word[Number(a - base)] = data[k]!;
      this.words.set(base, word);
    }
  }
}
