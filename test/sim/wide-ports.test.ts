import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { withSeed, type Rng } from '../support/random';
import { PASSTHROUGH_REGISTERED_WIDTH, PASSTHROUGH_WIDTHS, passthroughBuild } from './fixtures';

const ROUNDS = 50;

function randomBits(r: Rng, width: number): bigint {
  let v = 0n;
  for (let i = 0; i < Math.ceil(width / 32); i++) v = (v << 32n) | BigInt(r.u32());
  return v & ((1n << BigInt(width)) - 1n);
}

const toOctets = (v: bigint, width: number): Uint8Array => {
  const out = new Uint8Array(Math.ceil(width / 8));
  for (let i = 0; i < out.length; i++) out[i] = Number((v >> BigInt(8 * i)) & 0xffn);
  return out;
};

describe('ports of every Verilator storage class (7, 33, 64, 65, 200 bits)', () => {
  let model: SimModel;

  beforeAll(() => {
    model = SimModel.open(buildModel(passthroughBuild()));
  });
  afterAll(() => model?.close());

  test.each(PASSTHROUGH_WIDTHS)('%i-bit values round-trip exactly as bigint and as octets', (width) => {
    withSeed(width, (r) => {
      const extremes = [0n, 1n, (1n << BigInt(width)) - 1n, 1n << BigInt(width - 1)];
      for (let i = 0; i < ROUNDS + extremes.length; i++) {
        const v = extremes[i] ?? randomBits(r, width);
        model.poke(`a_${width}`, v);
        model.eval();
        expect(model.peek(`y_${width}`)).toBe(v);
        expect(model.peekBytes(`y_${width}`)).toEqual(toOctets(v, width));
        model.poke(`a_${width}`, toOctets(v, width));
        model.eval();
        expect(model.peek(`y_${width}`)).toBe(v);
      }
    });
  });

  test('words are least-significant first and octets little-endian', () => {
    const bit64 = 1n << 64n;
    model.poke('a_65', bit64);
    model.eval();
    const h = model.handle('y_65');
    expect([...model.words.subarray(h.offset, h.offset + h.words)]).toEqual([0, 0, 1]);
    expect(model.peekBytes(h)[8]).toBe(1);
    model.poke('a_200', 0x0102030405060708090a0b0c0dn);
    model.eval();
    const y = model.peekBytes('y_200');
    expect([...y.subarray(0, 4)]).toEqual([0x0d, 0x0c, 0x0b, 0x0a]);
  });

  test('numbers up to 2^53 are accepted for wide ports', () => {
    model.poke('a_64', Number.MAX_SAFE_INTEGER);
    model.poke('a_33', 2 ** 33 - 1);
    model.eval();
    expect(model.peek('y_64')).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    expect(model.peek('y_33')).toBe(2n ** 33n - 1n);
  });

  test('a registered 200-bit value: peekPre before the edge, peek after', () => {
    withSeed(PASSTHROUGH_REGISTERED_WIDTH, (r) => {
      let previous = 0n;
      model.poke('a_200', 0n);
      model.tick();
      for (let i = 0; i < ROUNDS; i++) {
        const v = randomBits(r, PASSTHROUGH_REGISTERED_WIDTH);
        model.poke('a_200', v);
        model.tick();
        expect(model.peekPre('q_200')).toBe(previous);
        expect(model.peek('q_200')).toBe(v);
        expect(model.peekPre('a_200')).toBe(v);
        previous = v;
      }
    });
  });
});
