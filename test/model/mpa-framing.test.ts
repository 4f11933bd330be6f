import { describe, expect, test } from 'vitest';
import { CRC32C, crcWireOctets, referenceCrc } from '../../ts-model/crc32c';
import {
  MpaDeframer,
  MpaFramer,
  fpduLength,
  mpaOptions,
  mulpdu,
  type DeframeEvent,
  type MpaOptions,
} from '../../ts-model/mpa';
import { hex, withSeed, type Rng } from '../support/random';

/**
 * An independent, deliberately naive transmitter: octet by octet, straight from spec/mpa.md
 * §2–§4. The real framer must give exactly its octets.
 */
function naiveFrame(ulpdu: Uint8Array, startSeq: number, s0: number, markers: boolean, crc: boolean, o: MpaOptions): Uint8Array {
  const L = ulpdu.length;
  const pad = (4 - ((L + 2) % 4)) % 4;
  const mf = [L >> 8, L & 0xff, ...ulpdu, ...new Array(pad).fill(0)];
  const out: number[] = [];
  let seq = startSeq;
  const isMarkerSeq = (s: number) => markers && ((s - s0) >>> 0) % 512 === 0;
  const leading = isMarkerSeq(startSeq);
  const hdrSeq = (startSeq + (leading ? 4 : 0)) >>> 0;
  const ref = o.fpduptrRef === 'ulpduLength' ? hdrSeq : startSeq;
  for (let i = 0; i <= mf.length; i++) {
    // A marker goes wherever its sequence number comes up, as long as octets of the FPDU follow
    // (the CRC field always follows, so a marker before the CRC is inside the FPDU).
    if (isMarkerSeq(seq)) {
      const ptr = i === 0 ? 0 : (seq - ref) >>> 0;
      out.push(0, 0, ptr >> 8, ptr & 0xff);
      seq = (seq + 4) >>> 0;
    }
    if (i < mf.length) {
      out.push(mf[i]!);
      seq = (seq + 1) >>> 0;
    }
  }
  const spanStart = leading && !o.leadMarkerInCrc ? 4 : 0;
  const c = crc ? referenceCrc(CRC32C, Uint8Array.from(out.slice(spanStart))) : 0;
  return Uint8Array.from([...out, ...crcWireOctets(c)]);
}

const OPTION_SETS: MpaOptions[] = [
  mpaOptions(),
  mpaOptions({ leadMarkerInCrc: false }),
  mpaOptions({ fpduptrRef: 'fpduStart' }),
];

/** S0 anywhere, including just below 2^32 so the stream wraps. */
const randomS0 = (r: Rng): number => (r.bool(0.4) ? (0x100000000 - r.int(1, 3000)) >>> 0 : r.u32());

interface Stream {
  wire: Uint8Array;
  ulpdus: Uint8Array[];
  s0: number;
  markers: boolean;
  crc: boolean;
  options: MpaOptions;
  starts: number[];
}

function randomStream(r: Rng, count: number): Stream {
  const s0 = randomS0(r);
  const markers = r.bool(0.7);
  const crc = r.bool(0.8);
  const options = r.pick(OPTION_SETS);
  const emss = r.pick([536, 1460, 8960]);
  const max = mulpdu(emss, markers);
  const seq = (s0 + 4 * r.int(0, 300)) >>> 0;
  const tx = new MpaFramer({ s0, seq, markers, crc, options });
  const ulpdus: Uint8Array[] = [];
  const parts: Uint8Array[] = [];
  const starts: number[] = [];
  for (let i = 0; i < count; i++) {
    const len = r.pick([0, 1, 2, 3, 4, 5, max - 1, max, r.int(0, max), r.int(0, 64)]);
    const ulpdu = r.bytes(Math.max(0, len));
    const start = tx.seq;
    const f = tx.frame(ulpdu);
    expect(hex(f.wire), `FPDU ${i} at ${start}`).toBe(hex(naiveFrame(ulpdu, start, s0, markers, crc, options)));
    ulpdus.push(ulpdu);
    parts.push(f.wire);
    starts.push(start);
  }
  return { wire: Buffer.concat(parts), ulpdus, s0, markers, crc, options, starts: [...starts, tx.seq].slice(0, count) };
}

function feed(rx: MpaDeframer, wire: Uint8Array, r: Rng, mode: 'whole' | 'octets' | 'random'): DeframeEvent[] {
  const events: DeframeEvent[] = [];
  if (mode === 'whole') return rx.push(wire);
  for (let at = 0; at < wire.length; ) {
    const n = mode === 'octets' ? 1 : Math.min(wire.length - at, r.int(1, r.bool(0.5) ? 7 : 700));
    events.push(...rx.push(wire.subarray(at, at + n)));
    at += n;
  }
  return events;
}

const ulpdusOf = (events: DeframeEvent[]) => events.flatMap((e) => (e.kind === 'fpdu' ? [hex(e.ulpdu)] : []));

describe('framing against an independent naive transmitter, and deframe(frame(x)) = x', () => {
  test.each(['whole', 'random', 'octets'] as const)('random streams, cut %s', (mode) =>
    withSeed(mode.length, (r) => {
      const trials = mode === 'octets' ? 30 : 150;
      for (let t = 0; t < trials; t++) {
        const s = randomStream(r, r.int(1, 8));
        const rx = new MpaDeframer({ s0: s.s0, seq: s.starts[0], markers: s.markers, crc: s.crc, options: s.options });
        const events = feed(rx, s.wire, r, mode);
        expect(events.filter((e) => e.kind !== 'fpdu')).toEqual([]);
        expect(ulpdusOf(events)).toEqual(s.ulpdus.map(hex));
        expect(rx.seq).toBe((s.starts[0]! + s.wire.length) >>> 0);
        expect(rx.end()).toEqual([]);
      }
    }));

  test('every ULPDU size 0..MULPDU at EMSS 1460, markers and CRC on, S0 just below 2^32', () => {
    const s0 = 0xfffffe00;
    const max = mulpdu(1460, true);
    const tx = new MpaFramer({ s0, markers: true, crc: true });
    const rx = new MpaDeframer({ s0, markers: true, crc: true });
    for (let len = 0; len <= max; len++) {
      const ulpdu = new Uint8Array(len).fill(len & 0xff);
      const f = tx.frame(ulpdu);
      expect(f.wire.length).toBeLessThanOrEqual(1460);
      const ev = rx.push(f.wire);
      expect(ev).toHaveLength(1);
      expect(ev[0]).toMatchObject({ kind: 'fpdu', startSeq: f.startSeq, ulpdu: { length: len } });
    }
  });
});

describe('the four places a marker can land (spec/mpa.md §4.5)', () => {
  // Choose the start phase so that a marker falls where wanted; L = 14 (a tagged RTR) gives a
  // 20-octet marker-free FPDU: length(2) | header(14) | pad(0) | CRC(4).
  const ulpdu = Uint8Array.from({ length: 14 }, (_, i) => i + 1);
  const s0 = 0xfffffff0; // so the FPDUs straddle the 2^32 wrap as well
  const at = (phase: number) => new MpaFramer({ s0, markers: true, crc: true, seq: (s0 + 512 * 3 + phase) >>> 0 }).frame(ulpdu);

  test('(a) at the FPDU boundary: leading marker, FPDUPTR 0', () => {
    const f = at(0);
    expect(f.markers).toEqual([{ seq: f.startSeq, fpduptr: 0, wireOffset: 0, leading: true }]);
    expect(f.ulpduLengthSeq).toBe((f.startSeq + 4) >>> 0);
  });

  test('(b) after ULPDU_Length and the DDP control octets, splitting the DDP header', () => {
    const f = at(512 - 4);
    expect(f.markers).toEqual([{ seq: (f.startSeq + 4) >>> 0, fpduptr: 4, wireOffset: 4, leading: false }]);
    expect(hex(f.wire.subarray(0, 12))).toBe('000e0102' + '00000004' + '03040506');
  });

  test('(c) inside the ULPDU', () => {
    const f = at(512 - 12);
    expect(f.markers).toEqual([{ seq: (f.startSeq + 12) >>> 0, fpduptr: 12, wireOffset: 12, leading: false }]);
  });

  test('(d) between PAD and CRC, covered by the CRC', () => {
    const f = at(512 - 16);
    expect(f.markers).toEqual([{ seq: (f.startSeq + 16) >>> 0, fpduptr: 16, wireOffset: 16, leading: false }]);
    expect(f.crcOffset).toBe(20);
    expect(f.crc).toBe(referenceCrc(CRC32C, f.wire.subarray(0, 20)));
  });

  test('a marker exactly after the CRC belongs to the next FPDU', () => {
    const f = at(512 - 20);
    expect(f.markers).toEqual([]);
    expect(f.wire.length).toBe(20);
  });

  test.each([0, 512 - 4, 512 - 12, 512 - 16, 512 - 20])('the receiver accepts the marker at phase %i', (phase) => {
    const f = at(phase);
    const rx = new MpaDeframer({ s0, markers: true, crc: true, seq: f.startSeq });
    expect(ulpdusOf(rx.push(f.wire))).toEqual([hex(ulpdu)]);
  });
});

describe('MULPDU (spec/mpa.md §5)', () => {
  test.each([
    [536, 522, 530],
    [1220, 1202, 1214],
    [1440, 1422, 1434],
    [1448, 1430, 1442],
    [1460, 1442, 1454],
    [8960, 8882, 8954],
  ])('EMSS %i: %i with markers, %i without (noMarkerTerm)', (emss, on, off) => {
    expect(mulpdu(emss, true)).toBe(on);
    expect(mulpdu(emss, false, mpaOptions({ mulpduMode: 'noMarkerTerm' }))).toBe(off);
    expect(mulpdu(emss, false)).toBe(on); // default 'rfc' keeps the marker term
  });

  test('no FPDU of up to MULPDU octets exceeds EMSS on the wire, at any 4-aligned phase', () => {
    const emssList = [...Array.from({ length: 1599 - 64 + 1 }, (_, i) => 64 + i), 8948, 8960, 9000];
    const slack4: number[] = [];
    for (const emss of emssList) {
      const max = mulpdu(emss, true);
      let longest = 0;
      for (let phase = 0; phase < 512; phase += 4) {
        const tx = new MpaFramer({ s0: 0, seq: phase, markers: true, crc: true });
        for (let L = Math.max(0, max - 3); L <= max; L++) longest = Math.max(longest, tx.wireLength(L));
      }
      expect(longest, `EMSS ${emss}`).toBeLessThanOrEqual(emss);
      if (emss - longest >= 4) slack4.push(emss);
      const noMarkers = new MpaFramer({ s0: 0, markers: false, crc: true });
      expect(noMarkers.wireLength(mulpdu(emss, false, mpaOptions({ mulpduMode: 'noMarkerTerm' })))).toBeLessThanOrEqual(emss);
    }
    // Tight (less than 4 octets unused) except just past a multiple of 512, where ⌈EMSS/512⌉
    // counts a marker that no FPDU of that size can meet. spec/mpa.md §5 lists only 1025–1027 and
    // 1537–1539; the brute force also finds 513–519, 1028–1031 and 1540–1543.
    expect(slack4.every((emss) => emss % 512 >= 1 && emss % 512 <= 7)).toBe(true);
    expect(slack4).toEqual(expect.arrayContaining([1025, 1026, 1027, 1537, 1538, 1539]));
  });

  test('fpduLength is 2 + L + pad + 4, a multiple of 4', () => {
    for (let L = 0; L < 64; L++) {
      expect(fpduLength(L) % 4).toBe(0);
      expect(fpduLength(L) - 6 - L).toBeLessThan(4);
    }
  });
});
