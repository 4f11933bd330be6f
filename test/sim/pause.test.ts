import { describe, expect, test } from 'vitest';
import { always, every, never, pattern, random, type PauseGen } from '../../sim/cocotb/pause';

const take = (g: PauseGen, n: number): string => Array.from({ length: n }, () => (g.next() ? '1' : '0')).join('');

describe('pause generators', () => {
  test('always pauses, never does not', () => {
    expect(take(always(), 5)).toBe('11111');
    expect(take(never(), 5)).toBe('00000');
  });

  test('every(n) pauses the n-th cycle of each n', () => {
    expect(take(every(3), 9)).toBe('001001001');
    expect(take(every(1), 3)).toBe('111');
    expect(() => every(0)).toThrow(RangeError);
  });

  test('a pattern string repeats', () => {
    expect(take(pattern('1100'), 10)).toBe('1100110011');
    expect(() => pattern('12')).toThrow(/'0' and '1'/);
    expect(() => pattern('')).toThrow();
  });

  test('random is deterministic per seed and pauses at about the asked rate', () => {
    const n = 10_000;
    const a = take(random(42, 0.3), n);
    expect(take(random(42, 0.3), n)).toBe(a);
    expect(take(random(43, 0.3), n)).not.toBe(a);
    const rate = [...a].filter((c) => c === '1').length / n;
    expect(rate).toBeGreaterThan(0.27);
    expect(rate).toBeLessThan(0.33);
    expect(take(random(1, 0), 100)).toBe('0'.repeat(100));
    expect(take(random(1, 1), 100)).toBe('1'.repeat(100));
    expect(() => random(1, 1.5)).toThrow(RangeError);
  });
});
