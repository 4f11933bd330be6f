import { describe, expect, test } from 'vitest';
import {
  MpaDeframer,
  MpaErrorCode,
  MpaFramer,
  corruptCrc,
  corruptMarker,
  corruptPayload,
  mpaOptions,
  mulpdu,
  type DeframeEvent,
  type FramedFpdu,
  type MpaOptions,
  type MpaStreamError,
} from '../../ts-model/mpa';
import { withSeed, type Rng } from '../support/random';

type Fault = (f: FramedFpdu, crc: boolean) => Uint8Array;

interface Case {
  name: string;
  markers: boolean;
  crc: boolean;
  options?: MpaOptions;
  fault: Fault;
  code: MpaErrorCode;
  /** The fault needs a marker inside the FPDU's span. */
  needsMarker?: boolean;
}

const CASES: Case[] = [
  { name: 'CRC field flipped', markers: true, crc: true, fault: (f) => corruptCrc(f), code: MpaErrorCode.CRC_MISMATCH },
  { name: 'CRC field flipped, no markers', markers: false, crc: true, fault: (f) => corruptCrc(f), code: MpaErrorCode.CRC_MISMATCH },
  { name: 'payload bit flipped', markers: true, crc: true, fault: (f) => corruptPayload(f, 3), code: MpaErrorCode.CRC_MISMATCH },
  {
    name: 'FPDUPTR wrong, CRC recomputed so only the marker check fails',
    markers: true,
    crc: true,
    fault: (f, crc) => corruptMarker(f, crc),
    code: MpaErrorCode.MARKER_MISMATCH,
    needsMarker: true,
  },
  {
    name: 'FPDUPTR wrong, CRC off',
    markers: true,
    crc: false,
    fault: (f, crc) => corruptMarker(f, crc),
    code: MpaErrorCode.MARKER_MISMATCH,
    needsMarker: true,
  },
  {
    name: 'FPDUPTR wrong and CRC left stale: the CRC check comes first',
    markers: true,
    crc: true,
    fault: (f) => corruptMarker(f, false),
    code: MpaErrorCode.CRC_MISMATCH,
    needsMarker: true,
  },
  {
    name: 'a leading marker that is not covered by the CRC (leadMarkerInCrc = false)',
    markers: true,
    crc: true,
    options: mpaOptions({ leadMarkerInCrc: false }),
    fault: (f, crc) => corruptMarker(f, crc),
    code: MpaErrorCode.MARKER_MISMATCH,
    needsMarker: true,
  },
];

interface Built {
  wire: Uint8Array;
  /** Wire octets of the intact FPDUs before the faulty one. */
  before: number;
  s0: number;
  seq: number;
  faulty: FramedFpdu;
}

/** A stream of `count` FPDUs with the fault applied to FPDU `at`. */
function build(r: Rng, c: Case, count: number, at: number): Built | null {
  const s0 = r.bool(0.5) ? r.u32() : (0x100000000 - r.int(1, 2000)) >>> 0;
  const seq = (s0 + 4 * r.int(0, 127)) >>> 0;
  const tx = new MpaFramer({ s0, seq, markers: c.markers, crc: c.crc, options: c.options });
  const parts: Uint8Array[] = [];
  let before = 0;
  let faulty: FramedFpdu | null = null;
  for (let i = 0; i < count; i++) {
    let f = tx.frame(r.bytes(r.int(0, mulpdu(1460, c.markers))));
    if (i === at) {
      // Retry until the FPDU has a marker when the fault needs one (keeps the stream valid).
      // The FPDUs passed over stay in the stream, intact.
      for (let tries = 0; c.needsMarker && !markerFits(c, f) && tries < 400; tries++) {
        parts.push(f.wire);
        before += f.wire.length;
        f = tx.frame(r.bytes(r.int(0, mulpdu(1460, c.markers))));
      }
      if (c.needsMarker && !markerFits(c, f)) return null;
      faulty = f;
      parts.push(c.fault(f, c.crc));
    } else {
      if (i < at) before += f.wire.length;
      parts.push(f.wire);
    }
  }
  return { wire: Buffer.concat(parts), before, s0, seq, faulty: faulty! };
}

function markerFits(c: Case, f: FramedFpdu): boolean {
  // leadMarkerInCrc = false: the case is about a leading marker outside the CRC span.
  if (c.options && !c.options.leadMarkerInCrc) return f.markers[0]?.leading === true;
  return f.markers.length > 0;
}

const firstError = (events: DeframeEvent[]) => events.find((e) => e.kind === 'error') as MpaStreamError | undefined;

describe.each(CASES)('receive error: $name', (c) => {
  test('is reported with its code at the faulty FPDU, after every earlier FPDU was delivered', () =>
    withSeed(c.name.length * 7 + c.code, (r) => {
      let checked = 0;
      for (let trial = 0; trial < 60; trial++) {
        const at = r.int(0, 5);
        const b = build(r, c, at + 1 + r.int(0, 3), at);
        if (!b) continue;
        const rx = new MpaDeframer({ s0: b.s0, seq: b.seq, markers: c.markers, crc: c.crc, options: c.options });
        const events: DeframeEvent[] = [];
        for (let i = 0; i < b.wire.length; ) {
          const n = Math.min(b.wire.length - i, r.int(1, 900));
          events.push(...rx.push(b.wire.subarray(i, i + n)));
          i += n;
        }
        const err = firstError(events);
        expect(err, 'an error is reported').toBeDefined();
        expect({ layer: err!.layer, etype: err!.etype, code: err!.code }).toEqual({ layer: 2, etype: 0, code: c.code });
        expect(err!.startSeq).toBe(b.faulty.startSeq);
        expect(err!.startSeq).toBe((b.seq + b.before) >>> 0);
        expect(err!.index).toBe(events.indexOf(err!));
        // Exactly the FPDUs before the faulty one were delivered, then nothing.
        expect(events.filter((e) => e.kind === 'fpdu').length).toBe(events.indexOf(err!));
        expect(events[events.length - 1]).toBe(err);
        expect(rx.error).toBe(err);
        checked++;
      }
      expect(checked).toBeGreaterThan(20);
    }));
});

describe('receive checks: order and stopping', () => {
  test('ULPDU_Length above maxUlpduLength is 2/0/0x03, reported before the CRC is even seen', () => {
    const options = mpaOptions({ maxUlpduLength: 1000 });
    const tx = new MpaFramer({ s0: 0, markers: false, crc: true });
    const ok = tx.frame(new Uint8Array(1000));
    const big = tx.frame(new Uint8Array(1001));
    const rx = new MpaDeframer({ s0: 0, markers: false, crc: true, options });
    expect(rx.push(ok.wire).map((e) => e.kind)).toEqual(['fpdu']);
    const ev = rx.push(big.wire.subarray(0, 2)); // just the ULPDU_Length field
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ kind: 'error', code: MpaErrorCode.MARKER_MISMATCH, index: 1 });
  });

  test('nothing is delivered after the first error, whatever follows', () => {
    const tx = new MpaFramer({ s0: 0, markers: true, crc: true });
    const a = tx.frame(new Uint8Array(100));
    const b = tx.frame(new Uint8Array(100));
    const rx = new MpaDeframer({ s0: 0, markers: true, crc: true });
    expect(rx.push(corruptCrc(a)).map((e) => e.kind)).toEqual(['error']);
    expect(rx.push(b.wire)).toEqual([]);
    expect(rx.count).toBe(0);
    expect(rx.end()).toEqual([]);
  });

  test('a leading marker with a non-zero FPDUPTR is 2/0/0x03', () => {
    const tx = new MpaFramer({ s0: 0, markers: true, crc: true });
    const f = tx.frame(new Uint8Array(10));
    expect(f.markers[0]!.leading).toBe(true);
    const rx = new MpaDeframer({ s0: 0, markers: true, crc: true });
    expect(rx.push(corruptMarker(f, true))).toMatchObject([{ kind: 'error', code: MpaErrorCode.MARKER_MISMATCH, index: 0 }]);
  });

  test('with checkMarkers = false a wrong FPDUPTR is not checked', () => {
    const tx = new MpaFramer({ s0: 0, markers: true, crc: false });
    const f = tx.frame(new Uint8Array(1200));
    const rx = new MpaDeframer({ s0: 0, markers: true, crc: false, options: mpaOptions({ checkMarkers: false }) });
    expect(rx.push(corruptMarker(f, false, 1)).map((e) => e.kind)).toEqual(['fpdu']);
  });

  test('CRC off: a corrupted CRC field is ignored', () => {
    const tx = new MpaFramer({ s0: 0, markers: false, crc: false });
    const f = tx.frame(new Uint8Array(33));
    const rx = new MpaDeframer({ s0: 0, markers: false, crc: false });
    expect(rx.push(corruptCrc(f)).map((e) => e.kind)).toEqual(['fpdu']);
  });

  test('the stream ending inside an FPDU is the local error 0x01', () => {
    const f = new MpaFramer({ s0: 7, markers: true, crc: true }).frame(new Uint8Array(40));
    for (const cut of [1, 3, 4, 6, 20, f.wire.length - 1]) {
      const rx = new MpaDeframer({ s0: 7, markers: true, crc: true });
      expect(rx.push(f.wire.subarray(0, cut))).toEqual([]);
      expect(rx.end()).toMatchObject([{ kind: 'error', code: MpaErrorCode.TCP_CLOSED, index: 0 }]);
    }
  });

  test('silentDropOnCrcError discards the FPDU and rewinds for the retransmission', () => {
    const options = mpaOptions({ silentDropOnCrcError: true });
    const tx = new MpaFramer({ s0: 100, markers: true, crc: true });
    const a = tx.frame(new Uint8Array(600).fill(1));
    const b = tx.frame(new Uint8Array(600).fill(2));
    const rx = new MpaDeframer({ s0: 100, markers: true, crc: true, options });
    const ev = rx.push(Buffer.concat([a.wire, corruptCrc(b), a.wire.subarray(0, 9)]));
    expect(ev.map((e) => e.kind)).toEqual(['fpdu', 'discard']);
    expect(ev[1]).toMatchObject({ startSeq: b.startSeq, code: MpaErrorCode.CRC_MISMATCH, index: 1 });
    expect(rx.seq).toBe(b.startSeq);
    // TCP retransmits from the discarded FPDU: now intact.
    const again = rx.push(b.wire);
    expect(again.map((e) => e.kind)).toEqual(['fpdu']);
    expect(again[0]).toMatchObject({ index: 1, startSeq: b.startSeq });
  });

  test('a framer start that is not 4-aligned to S0 is refused with a clear message', () => {
    expect(() => new MpaFramer({ s0: 0, seq: 2, markers: true, crc: true })).toThrow(/4-aligned relative to S0/);
    expect(() => new MpaDeframer({ s0: 2 ** 32, markers: true, crc: true })).toThrow(/s0 must be a 32-bit/);
  });

  test('bad options are a zod error naming the field', () => {
    expect(() => mpaOptions({ maxUlpduLength: 70000 })).toThrow(/maxUlpduLength/);
    expect(() => mpaOptions({ fpduptrRef: 'nowhere' as never })).toThrow(/fpduptrRef/);
  });
});
