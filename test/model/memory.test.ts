import { describe, expect, test } from 'vitest';
import { ZodError } from 'zod';
import type { AccessRight } from '../../ts-model/memory/access';
import { ADDRESS_SPACE, HostMemory, PAGE_SIZE } from '../../ts-model/memory/host-memory';
import { makeStag, stagIndex, stagKey } from '../../ts-model/memory/stag';
import { StagTable, type RegionSpec, type TaggedFault } from '../../ts-model/memory/stag-table';
import { withSeed } from '../support/random';

const TOP = ADDRESS_SPACE;
/** Index of the first differing octet, -1 if equal: toEqual on large typed arrays is slow. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  if (Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length))) return -1;
  return a.findIndex((x, i) => x !== b[i]);
}

const ALL_RIGHTS: AccessRight[] = ['local-read', 'local-write', 'remote-read', 'remote-write', 'remote-atomic'];

describe('STag', () => {
  test('splits into a 24-bit index (high) and an 8-bit key (low)', () => {
    const stag = makeStag(0xabcdef, 0x42);
    expect(stag).toBe(0xabcdef42);
    expect(stagIndex(stag)).toBe(0xabcdef);
    expect(stagKey(stag)).toBe(0x42);
  });

  test('refuses an index or key wider than its field', () => {
    expect(() => makeStag(1 << 24, 0)).toThrow(RangeError);
    expect(() => makeStag(0, 0x100)).toThrow(RangeError);
    expect(() => stagIndex(2 ** 32)).toThrow(RangeError);
  });
});

describe('StagTable', () => {
  const STAG = makeStag(7, 0x5a);
  const PD = 3;

  function table(spec: Partial<RegionSpec> = {}): StagTable {
    const t = new StagTable();
    t.register({ stag: STAG, pd: PD, base: 0x10000n, length: 0x1000n, access: ['remote-write'], ...spec });
    return t;
  }

  // Each row breaks every check from `fault` on, so only the order decides what is reported.
  const ORDER: { fault: TaggedFault; stag: number; pd: number; right: AccessRight; to: bigint; length: bigint }[] = [
    { fault: 'invalid-stag', stag: makeStag(7, 0x5b), pd: PD + 1, right: 'remote-read', to: TOP - 1n, length: 2n },
    { fault: 'pd-mismatch', stag: STAG, pd: PD + 1, right: 'remote-read', to: TOP - 1n, length: 2n },
    { fault: 'access', stag: STAG, pd: PD, right: 'remote-read', to: TOP - 1n, length: 2n },
    { fault: 'to-wrap', stag: STAG, pd: PD, right: 'remote-write', to: TOP - 1n, length: 2n },
    { fault: 'bounds', stag: STAG, pd: PD, right: 'remote-write', to: 0x1000n, length: 1n },
  ];
  test.each(ORDER)('reports $fault first when it and every later check fail', ({ fault, stag, pd, right, to, length }) => {
    expect(table().check(stag, to, length, pd, right)).toEqual({ ok: false, fault });
  });

  test('an unregistered index is an invalid STag', () => {
    expect(table().check(makeStag(8, 0x5a), 0n, 1, PD, 'remote-write')).toEqual({ ok: false, fault: 'invalid-stag' });
  });

  test('a key mismatch is an invalid STag and lookup does not find it', () => {
    const t = table();
    expect(t.check(makeStag(7, 0x00), 0n, 1, PD, 'remote-write')).toEqual({ ok: false, fault: 'invalid-stag' });
    expect(t.lookup(makeStag(7, 0x00))).toBeUndefined();
    expect(t.lookup(STAG)?.stag).toBe(STAG);
  });

  test('zero-based: TO 0 is the first octet, the last octet is TO length−1, one past fails', () => {
    const t = table({ addressing: 'zero-based' });
    expect(t.check(STAG, 0n, 1, PD, 'remote-write')).toMatchObject({ ok: true, address: 0x10000n });
    expect(t.check(STAG, 0xfffn, 1, PD, 'remote-write')).toMatchObject({ ok: true, address: 0x10fffn });
    expect(t.check(STAG, 0n, 0x1000, PD, 'remote-write')).toMatchObject({ ok: true, address: 0x10000n });
    expect(t.check(STAG, 0x1000n, 1, PD, 'remote-write')).toEqual({ ok: false, fault: 'bounds' });
    expect(t.check(STAG, 1n, 0x1000, PD, 'remote-write')).toEqual({ ok: false, fault: 'bounds' });
  });

  test('va: the TO of the first octet is the base address, one before or one past fails', () => {
    const t = table({ addressing: 'va' });
    expect(t.check(STAG, 0x10000n, 8, PD, 'remote-write')).toMatchObject({ ok: true, address: 0x10000n });
    expect(t.check(STAG, 0x10ff8n, 8n, PD, 'remote-write')).toMatchObject({ ok: true, address: 0x10ff8n });
    expect(t.check(STAG, 0xffffn, 1, PD, 'remote-write')).toEqual({ ok: false, fault: 'bounds' });
    expect(t.check(STAG, 0x10ff9n, 8, PD, 'remote-write')).toEqual({ ok: false, fault: 'bounds' });
    expect(t.check(STAG, 0n, 1, PD, 'remote-write')).toEqual({ ok: false, fault: 'bounds' });
  });

  test('a zero-length access is still checked and may sit at one past the last octet', () => {
    const t = table();
    expect(t.check(STAG, 0x1000n, 0, PD, 'remote-write')).toMatchObject({ ok: true });
    expect(t.check(STAG, 0x1001n, 0, PD, 'remote-write')).toEqual({ ok: false, fault: 'bounds' });
    expect(t.check(makeStag(9, 0), 0n, 0, PD, 'remote-write')).toEqual({ ok: false, fault: 'invalid-stag' });
  });

  test('a TO range ending exactly at 2^64 is allowed, one octet more wraps', () => {
    const base = TOP - 0x1000n;
    const t = table({ addressing: 'va', base, length: 0x1000n });
    expect(t.check(STAG, TOP - 8n, 8, PD, 'remote-write')).toMatchObject({ ok: true, address: TOP - 8n });
    expect(t.check(STAG, TOP - 8n, 9, PD, 'remote-write')).toEqual({ ok: false, fault: 'to-wrap' });
    expect(t.check(STAG, TOP - 1n, 2n ** 64n, PD, 'remote-write')).toEqual({ ok: false, fault: 'to-wrap' });
  });

  test('a zero-based TO that would wrap reports to-wrap, not bounds', () => {
    expect(table().check(STAG, TOP - 4n, 8, PD, 'remote-write')).toEqual({ ok: false, fault: 'to-wrap' });
  });

  test('each right is granted only when registered', () => {
    const t = new StagTable();
    ALL_RIGHTS.forEach((right, i) => t.register({ stag: makeStag(i + 1, 0), length: 8n, access: [right] }));
    ALL_RIGHTS.forEach((right, i) =>
      ALL_RIGHTS.forEach((asked) =>
        expect(t.check(makeStag(i + 1, 0), 0n, 8, 0, asked).ok, `${right} asked ${asked}`).toBe(asked === right),
      ),
    );
  });

  test('refuses an out-of-range TO or a negative length as a caller bug', () => {
    expect(() => table().check(STAG, -1n, 1, PD, 'remote-write')).toThrow(RangeError);
    expect(() => table().check(STAG, TOP, 1, PD, 'remote-write')).toThrow(RangeError);
    expect(() => table().check(STAG, 0n, -1, PD, 'remote-write')).toThrow(RangeError);
  });

  test('invalidate makes later checks report invalid-stag and a second invalidate fail', () => {
    const t = table();
    expect(t.invalidate(STAG, PD)).toEqual({ ok: true });
    expect(t.lookup(STAG)?.valid).toBe(false);
    expect(t.check(STAG, 0n, 1, PD, 'remote-write')).toEqual({ ok: false, fault: 'invalid-stag' });
    expect(t.invalidate(STAG, PD)).toEqual({ ok: false, fault: 'invalid-stag' });
  });

  test('invalidate with the wrong PD or the wrong key fails and leaves the region valid', () => {
    const t = table();
    expect(t.invalidate(STAG, PD + 1)).toEqual({ ok: false, fault: 'pd-mismatch' });
    expect(t.invalidate(makeStag(7, 0x5b), PD)).toEqual({ ok: false, fault: 'invalid-stag' });
    expect(t.check(STAG, 0n, 1, PD, 'remote-write').ok).toBe(true);
  });

  test('a non-invalidatable region refuses invalidation after the PD check', () => {
    const t = table({ invalidatable: false });
    expect(t.invalidate(STAG, PD + 1)).toEqual({ ok: false, fault: 'pd-mismatch' });
    expect(t.invalidate(STAG, PD)).toEqual({ ok: false, fault: 'not-invalidatable' });
    expect(t.check(STAG, 0n, 1, PD, 'remote-write').ok).toBe(true);
  });

  test('refuses a second registration of the same 24-bit index, whatever the key', () => {
    const t = table();
    expect(() => t.register({ stag: makeStag(7, 0x01), length: 1n, access: [] })).toThrow(/already registered/);
    t.invalidate(STAG, PD);
    expect(() => t.register({ stag: STAG, length: 1n, access: [] })).toThrow(/already registered/);
  });

  test('fills defaults and lists regions in index order with immutable records', () => {
    const t = new StagTable();
    t.register({ stag: makeStag(5, 1), length: 16n, access: ['local-read'] });
    t.register({ stag: makeStag(2, 1), length: 16n, access: [] });
    const [first, second] = t.regions();
    expect(first?.stag).toBe(makeStag(2, 1));
    expect(second).toMatchObject({ pd: 0, base: 0n, addressing: 'zero-based', valid: true, invalidatable: true });
    expect(Object.isFrozen(second)).toBe(true);
  });

  const BAD: { field: string; spec: Record<string, unknown> }[] = [
    { field: 'access', spec: { access: ['bogus'] } },
    { field: 'stag', spec: { stag: 2 ** 32 } },
    { field: 'pd', spec: { pd: -1 } },
    { field: 'base', spec: { base: -1n } },
    { field: 'length', spec: { length: 0n } },
    { field: 'length', spec: { base: TOP - 4n, length: 5n } },
    { field: 'addressing', spec: { addressing: 'physical' } },
  ];
  test.each(BAD)('a bad $field raises a ZodError naming it', ({ field, spec }) => {
    const input = { stag: 1, length: 8n, access: ['remote-read'], ...spec } as RegionSpec;
    try {
      new StagTable().register(input);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ZodError);
      expect((e as ZodError).issues.map((i) => i.path[0])).toContain(field);
    }
  });

  test('a region may end exactly at the top of the address space', () => {
    const t = new StagTable();
    expect(() => t.register({ stag: 1, base: TOP - 4n, length: 4n, access: [] })).not.toThrow();
  });
});

describe('HostMemory', () => {
  test('unwritten octets read as zero and allocate no page', () => {
    const m = new HostMemory();
    expect(m.read(0x1234_5678_9abcn, 10)).toEqual(new Uint8Array(10));
    expect(m.pagesTouched()).toBe(0);
  });

  test('a write crossing page boundaries reads back whole and touches every page it spans', () => {
    const m = new HostMemory();
    const data = Uint8Array.from({ length: 2 * PAGE_SIZE + 10 }, (_, i) => (i * 7 + 1) & 0xff);
    const at = BigInt(5 * PAGE_SIZE - 5);
    m.write(at, data);
    expect(m.pagesTouched()).toBe(4);
    expect(m.read(at, data.length)).toEqual(data);
    expect(m.read(at - 1n, 3)).toEqual(Uint8Array.of(0, data[0]!, data[1]!));
    expect(m.read(BigInt(5 * PAGE_SIZE), 2)).toEqual(data.subarray(5, 7));
  });

  test('the last octet below 2^64 is addressable, anything past it is a RangeError', () => {
    const m = new HostMemory();
    m.write(TOP - 2n, Uint8Array.of(0xaa, 0xbb));
    expect(m.read(TOP - 1n, 1)).toEqual(Uint8Array.of(0xbb));
    expect(m.read(TOP, 0)).toEqual(new Uint8Array(0));
    expect(() => m.write(TOP - 1n, Uint8Array.of(1, 2))).toThrow(RangeError);
    expect(() => m.read(TOP - 7n, 8)).toThrow(RangeError);
    expect(() => m.readU64(TOP - 4n, 'little')).toThrow(RangeError);
    expect(() => m.read(-1n, 1)).toThrow(RangeError);
  });

  test('u64 values are stored in the requested byte order', () => {
    const m = new HostMemory();
    const v = 0x0102030405060708n;
    m.writeU64(0x1000n, v, 'little');
    m.writeU64(0x2000n, v, 'big');
    expect(m.read(0x1000n, 8)).toEqual(Uint8Array.of(8, 7, 6, 5, 4, 3, 2, 1));
    expect(m.read(0x2000n, 8)).toEqual(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8));
    expect(m.readU64(0x1000n, 'little')).toBe(v);
    expect(m.readU64(0x1000n, 'big')).toBe(0x0807060504030201n);
    // straddling a page boundary
    m.writeU64(BigInt(3 * PAGE_SIZE - 3), 0xffeeddccbbaa9988n, 'big');
    expect(m.readU64(BigInt(3 * PAGE_SIZE - 3), 'big')).toBe(0xffeeddccbbaa9988n);
    expect(() => m.writeU64(0n, 1n << 64n, 'big')).toThrow(RangeError);
    expect(() => m.writeU64(0n, -1n, 'big')).toThrow(RangeError);
  });

  test('digest is FNV-1a 64 (published values for "", "a", "foobar")', () => {
    const m = new HostMemory();
    m.write(0x100n, new TextEncoder().encode('foobar'));
    expect(m.digest(0x100n, 0)).toBe('cbf29ce484222325');
    expect(m.digest(0x100n, 1)).not.toBe(m.digest(0x101n, 1));
    const a = new HostMemory();
    a.write(0n, new TextEncoder().encode('a'));
    expect(a.digest(0n, 1)).toBe('af63dc4c8601ec8c');
    expect(m.digest(0x100n, 6)).toBe('85944171f73967e8');
  });

  test('digest is stable, counts unwritten octets as zero, and changes with content', () => {
    const m = new HostMemory();
    const empty = new HostMemory();
    const range = [BigInt(PAGE_SIZE - 100), 3 * PAGE_SIZE] as const;
    m.write(range[0], new Uint8Array(50));
    expect(m.digest(...range)).toBe(empty.digest(...range));
    m.write(BigInt(2 * PAGE_SIZE), Uint8Array.of(1));
    const d = m.digest(...range);
    expect(m.digest(...range)).toBe(d);
    expect(d).not.toBe(empty.digest(...range));
    m.write(BigInt(2 * PAGE_SIZE), Uint8Array.of(2));
    expect(m.digest(...range)).not.toBe(d);
    expect(d).toMatch(/^[0-9a-f]{16}$/);
  });

  test.each([
    { where: 'low memory', origin: 0x7000n - 123n },
    { where: 'the top of the address space', origin: TOP - 5n * BigInt(PAGE_SIZE) },
  ])('random writes and reads agree with a flat reference array near $where', ({ origin }) => {
    withSeed(0x4d454d, (r) => {
      const size = 5 * PAGE_SIZE;
      const ref = new Uint8Array(size);
      const m = new HostMemory();
      for (let i = 0; i < 400; i++) {
        const length = r.pick([0, 1, 7, 8, 100, PAGE_SIZE, PAGE_SIZE + 1, r.int(0, 2 * PAGE_SIZE + 17)]);
        const offset = r.int(0, size - length);
        if (r.bool(0.6)) {
          const data = r.bytes(length);
          m.write(origin + BigInt(offset), data);
          ref.set(data, offset);
        } else {
          const got = m.read(origin + BigInt(offset), length);
          expect(firstDifference(got, ref.subarray(offset, offset + length)), `read ${length} at +${offset}`).toBe(-1);
        }
      }
      expect(firstDifference(m.read(origin, size), ref)).toBe(-1);
      const fresh = new HostMemory();
      fresh.write(origin, ref);
      expect(m.digest(origin, size)).toBe(fresh.digest(origin, size));
    });
  });
});
