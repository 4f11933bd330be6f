import { describe, expect, test } from 'vitest';
import { HostMemory } from '../../ts-model/memory/host-memory';
import {
  AOpCode,
  MASK64,
  bytesToU64,
  cmpSwap,
  fetchAdd,
  isAligned64,
  u64ToBytes,
} from '../../ts-model/rdmap/atomics';
import { hex, unhex, withSeed, type Rng } from '../support/random';
import { loadVectors } from '../support/vectors';

interface SemanticsEntry {
  name: string;
  op: 'FetchAdd' | 'CmpSwap' | 'Swap';
  aopcode: string;
  [field: string]: unknown;
}

const SEMANTICS = loadVectors<{ semantics: SemanticsEntry[] }>('atomics.json').semantics;
const field = (e: SemanticsEntry, name: string): string => {
  const v = e[name];
  if (typeof v !== 'string') throw new Error(`${e.name}: field ${name} missing`);
  return v;
};
const big = (e: SemanticsEntry, name: string): bigint => BigInt(field(e, name));
const byPrefix = (prefix: RegExp) => SEMANTICS.filter((e) => prefix.test(e.name));

const FETCH_ADD_ROWS = byPrefix(/^FA\d/);
const CMP_SWAP_ROWS = byPrefix(/^CS\d/);

describe('atomics.json semantics', () => {
  test('holds the FetchAdd, CmpSwap, SW1, E1 and MA1 rows', () => {
    expect(FETCH_ADD_ROWS.length).toBeGreaterThanOrEqual(10);
    expect(CMP_SWAP_ROWS.length).toBeGreaterThanOrEqual(7);
    expect(byPrefix(/^(SW1|E1|MA1) /)).toHaveLength(3);
  });

  test.each(FETCH_ADD_ROWS.map((e) => [e.name, e] as const))('%s: FetchAdd gives new_memory and returns the original', (_, e) => {
    const orig = big(e, 'original');
    expect(Number(e.aopcode)).toBe(AOpCode.FETCH_ADD);
    expect(fetchAdd(orig, big(e, 'add_data'), big(e, 'add_mask'))).toBe(big(e, 'new_memory'));
    // The response carries the value before the operation.
    expect(big(e, 'returned')).toBe(orig);
  });

  test.each(CMP_SWAP_ROWS.map((e) => [e.name, e] as const))('%s: CmpSwap gives match and new_memory', (_, e) => {
    const orig = big(e, 'original');
    expect(Number(e.aopcode)).toBe(AOpCode.CMP_SWAP);
    const r = cmpSwap(orig, big(e, 'compare_data'), big(e, 'compare_mask'), big(e, 'swap_data'), big(e, 'swap_mask'));
    expect(r).toEqual({ value: big(e, 'new_memory'), match: e.match });
    expect(big(e, 'returned')).toBe(orig);
  });

  test('SW1: AOpCode 0x1 is the draft-00 Swap, reserved in RFC 7306', () => {
    const [sw1] = byPrefix(/^SW1 /);
    expect(sw1?.draft_00_only).toBe(true);
    expect(Number(sw1?.aopcode)).toBe(AOpCode.SWAP_DRAFT00);
  });

  test.each(['little', 'big'] as const)('E1: FetchAdd 5 + 3 in %s-endian memory matches the octets at the port and on the wire', (endian) => {
    const [e1] = byPrefix(/^E1 /);
    if (e1 === undefined) throw new Error('E1 missing');
    const m = new HostMemory();
    const at = 0x2000n;
    m.write(at, unhex(field(e1, `memory_${endian}_endian_before_hex`)));
    const orig = m.readU64(at, endian);
    const addData = bytesToU64(unhex(field(e1, 'add_data_wire_hex')), 'big');
    m.writeU64(at, fetchAdd(orig, addData, 0n), endian);
    expect(hex(m.read(at, 8))).toBe(field(e1, `memory_${endian}_endian_after_hex`));
    expect(hex(u64ToBytes(orig, 'big'))).toBe(field(e1, 'returned_wire_hex'));
  });

  test('MA1: the misaligned translated address is refused by isAligned64', () => {
    const [ma1] = byPrefix(/^MA1 /);
    const address = BigInt(field(ma1!, 'translated_address'));
    expect(isAligned64(address)).toBe(false);
    expect(isAligned64(address & ~7n)).toBe(true);
  });
});

describe('operand handling', () => {
  test('isAligned64 accepts only multiples of 8', () => {
    expect([0n, 8n, 0x1000n, MASK64 - 7n].map(isAligned64)).toEqual([true, true, true, true]);
    expect([1n, 4n, 7n, MASK64].map(isAligned64)).toEqual([false, false, false, false]);
  });

  test('u64ToBytes and bytesToU64 round-trip in both byte orders', () => {
    const v = 0x0102030405060708n;
    expect(hex(u64ToBytes(v, 'big'))).toBe('0102030405060708');
    expect(hex(u64ToBytes(v, 'little'))).toBe('0807060504030201');
    expect(bytesToU64(u64ToBytes(v, 'little'), 'little')).toBe(v);
    expect(bytesToU64(unhex('0102030405060708'), 'little')).toBe(0x0807060504030201n);
    expect(() => bytesToU64(new Uint8Array(7), 'big')).toThrow(RangeError);
  });

  test('operands wider than 64 bits are masked, negative ones refused', () => {
    expect(fetchAdd((1n << 64n) | 5n, 3n, 0n)).toBe(8n);
    expect(cmpSwap(1n << 64n, 0n, MASK64, 9n, MASK64)).toEqual({ value: 9n, match: true });
    expect(() => fetchAdd(-1n, 0n, 0n)).toThrow(RangeError);
    expect(() => cmpSwap(0n, 0n, 0n, 0n, -1n)).toThrow(RangeError);
    expect(() => u64ToBytes(-1n, 'big')).toThrow(RangeError);
  });
});

/**
 * RFC 7306 §5.1.1 pseudo-code, bit by bit: add the operand bits and the carry at each position;
 * the carry into the next position is cleared where the Add Mask bit is 1 (that bit is a field MSB).
 */
function fetchAddBitSerial(orig: bigint, addData: bigint, addMask: bigint): bigint {
  let result = 0n;
  let carry = 0n;
  for (let i = 0n; i < 64n; i++) {
    const sum = ((orig >> i) & 1n) + ((addData >> i) & 1n) + carry;
    result |= (sum & 1n) << i;
    carry = (addMask >> i) & 1n ? 0n : sum >> 1n;
  }
  return result;
}

/** A 64-bit value whose bits are set with probability `density`. */
function sparse(r: Rng, density: number): bigint {
  let v = 0n;
  for (let i = 0n; i < 64n; i++) if (r.bool(density)) v |= 1n << i;
  return v;
}
/** Operands: uniform, or an edge value, or sparse/dense so long carry chains occur. */
const operand = (r: Rng): bigint =>
  r.pick([() => r.u64(), () => r.pick([0n, 1n, MASK64, 1n << 63n, MASK64 >> 1n]), () => sparse(r, r.pick([0.02, 0.98]))])();
/** Masks from empty through a few field MSBs to almost all ones. */
const MASK_DENSITIES = [0, 1 / 64, 2 / 64, 4 / 64, 0.25, 0.5, 0.75, 60 / 64, 63 / 64, 1];

describe('FetchAdd closed form', () => {
  test('equals the bit-serial RFC 7306 §5.1.1 loop on 20 000 random cases', () => {
    withSeed(0xfadd, (r) => {
      for (let n = 0; n < 20_000; n++) {
        const orig = operand(r);
        const addData = operand(r);
        const addMask = sparse(r, r.pick(MASK_DENSITIES));
        const want = fetchAddBitSerial(orig, addData, addMask);
        const got = fetchAdd(orig, addData, addMask);
        if (got !== want) {
          expect(got, `case ${n}: orig 0x${orig.toString(16)} A 0x${addData.toString(16)} K 0x${addMask.toString(16)}`).toBe(want);
        }
      }
    });
  });

  test('Add Mask 0 or bit 63 alone is a plain add mod 2^64; all ones is XOR', () => {
    withSeed(0xadd0, (r) => {
      for (let n = 0; n < 1000; n++) {
        const a = r.u64();
        const b = r.u64();
        expect(fetchAdd(a, b, 0n)).toBe((a + b) & MASK64);
        expect(fetchAdd(a, b, 1n << 63n)).toBe((a + b) & MASK64);
        expect(fetchAdd(a, b, MASK64)).toBe(a ^ b);
      }
    });
  });
});
