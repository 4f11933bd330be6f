import { describe, expect, test } from 'vitest';
import {
  CRC32C,
  Crc32c,
  applyCrcMatrices,
  crc32c,
  crc32cEngine,
  crcWireOctets,
  deriveCrcMatrixSet,
  readCrcField,
  referenceCrc,
  referenceUpdate,
} from '../../ts-model/crc32c';
import { hex, unhex, withSeed } from '../support/random';
import { loadVectors, num } from '../support/vectors';

interface CrcVector {
  name: string;
  input_hex: string;
  crc: string;
  wire_hex: string;
}
const file = loadVectors<{ parameters: Record<string, unknown>; vectors: CrcVector[] }>('crc32c.json');

describe('CRC-32C parameters', () => {
  test('the parameter object matches the shared vector file', () => {
    expect(CRC32C.poly).toBe(num(file.parameters.poly as string));
    expect(CRC32C.init).toBe(num(file.parameters.init as string));
    expect(CRC32C.xorOut).toBe(num(file.parameters.xorout as string));
    expect(CRC32C.reflectIn).toBe(file.parameters.refin);
    expect(CRC32C.reflectOut).toBe(file.parameters.refout);
    expect(CRC32C.residue).toBe(num(file.parameters.residue_raw_register as string));
  });

  test('the check value is CRC("123456789")', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(CRC32C.check);
    expect(referenceCrc(CRC32C, new TextEncoder().encode('123456789'))).toBe(CRC32C.check);
  });
});

describe.each(file.vectors)('vector: $name', (v) => {
  const input = unhex(v.input_hex);

  test('table-driven and bit-serial CRCs give the published value and wire octets', () => {
    expect(crc32c(input)).toBe(num(v.crc));
    expect(referenceCrc(CRC32C, input)).toBe(num(v.crc));
    expect(hex(crcWireOctets(crc32c(input)))).toBe(v.wire_hex);
    expect(readCrcField(unhex(v.wire_hex), 0)).toBe(num(v.crc));
  });

  test('the incremental API gives the same value at every split point', () => {
    for (let cut = 0; cut <= input.length; cut++) {
      const c = new Crc32c().update(input.subarray(0, cut)).update(input, cut);
      expect(c.digest()).toBe(num(v.crc));
    }
  });

  test('message followed by its wire-order CRC leaves the residue in the register', () => {
    const c = new Crc32c().update(input).update(unhex(v.wire_hex));
    expect(c.raw).toBe(CRC32C.residue);
  });
});

describe('table-driven CRC against the bit-serial reference', () => {
  test('random lengths and unaligned offsets (slicing path and byte path)', () =>
    withSeed(1, (r) => {
      const pool = r.bytes(4096 + 64);
      for (let n = 0; n < 400; n++) {
        const len = n < 200 ? n : r.int(0, 4096);
        const off = r.int(0, 63);
        const data = pool.subarray(off, off + len);
        expect(crc32c(data), `len ${len} off ${off}`).toBe(referenceCrc(CRC32C, data));
        const split = r.int(0, len);
        const reg = crc32cEngine.update(crc32cEngine.update(CRC32C.init, data, 0, split), data, split);
        expect(crc32cEngine.finish(reg)).toBe(referenceCrc(CRC32C, data));
      }
    }));
});

describe.each([1, 2, 4, 8, 16, 32, 64])('GF(2) update matrices, %i-byte datapath', (width) => {
  const set = deriveCrcMatrixSet(CRC32C, width);

  test('one matrix pair per number of valid bytes, of the right shape', () => {
    expect(set).toHaveLength(width);
    set.forEach((m, i) => {
      expect(m.nBytes).toBe(i + 1);
      expect(m.stateRows).toHaveLength(32);
      expect(m.dataRows.every((row) => row < 1n << BigInt(8 * (i + 1)))).toBe(true);
    });
  });

  test('every k-valid-byte update equals the byte-wise CRC on random state and data', () =>
    withSeed(100 + width, (r) => {
      for (let k = 1; k <= width; k++) {
        for (let trial = 0; trial < 4; trial++) {
          const state = r.u32();
          const data = r.bytes(k);
          expect(applyCrcMatrices(set[k - 1]!, state, data), `k=${k}`).toBe(referenceUpdate(CRC32C, state, data));
        }
      }
    }));

  test('a frame fed in beats, with a partial last beat, gives the software CRC', () =>
    withSeed(200 + width, (r) => {
      for (let trial = 0; trial < 8; trial++) {
        const frame = r.bytes(r.int(1, 4 * width + 7));
        let state = CRC32C.init;
        for (let at = 0; at < frame.length; at += width) {
          const beat = frame.subarray(at, Math.min(at + width, frame.length));
          state = applyCrcMatrices(set[beat.length - 1]!, state, beat);
        }
        expect(crc32cEngine.finish(state)).toBe(crc32c(frame));
      }
    }));
});
