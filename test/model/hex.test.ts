import { describe, expect, test } from 'vitest';
import { HEX_OCTETS, hex, parseHexOctets } from '../../ts-model/util/hex';
import { unhex } from '../support/random';

/** The one parser of hex octet strings (scenario `data`, test vectors): ts-model/util/hex.ts. */
describe('parseHexOctets', () => {
  const OCTETS = Uint8Array.from([0x00, 0x7f, 0x80, 0xff]);

  test('reads two digits per octet, either case, with an optional 0x or 0X prefix', () => {
    for (const text of ['007f80ff', '007F80FF', '0x007f80ff', '0X007F80ff']) {
      expect(HEX_OCTETS.test(text), text).toBe(true);
      expect(hex(parseHexOctets(text)), text).toBe(hex(OCTETS));
    }
  });

  test('an empty string, or the prefix alone, is zero octets', () => {
    expect(parseHexOctets('')).toEqual(new Uint8Array(0));
    expect(parseHexOctets('0x')).toEqual(new Uint8Array(0));
  });

  test('refuses odd digit counts, non-hex digits, a repeated or misplaced prefix, separators', () => {
    for (const text of ['0', '0x0', '0g', '0x0x00', '000x00', 'x00', '00 7f', '00:7f', ' 00']) {
      expect(HEX_OCTETS.test(text), text).toBe(false);
      expect(() => parseHexOctets(text), text).toThrow(RangeError);
    }
  });

  test('the tests read their vectors with the same parser', () => {
    expect(hex(unhex('0x007f80ff'))).toBe(hex(OCTETS));
    expect(() => unhex('0g')).toThrow(RangeError);
  });
});
