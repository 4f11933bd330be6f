import { describe, expect, test } from 'vitest';
import { apply, identity32, invert, mul, power, type Gf2Matrix } from '../../hdl-gen/lib/gf2';
import { ModuleBuilder, crc32cModule, type Module } from '../../hdl-gen/index';
import { crcPipeline, crcStateWidth } from '../../hdl-gen/lib/crc';
import { CRC32C, applyCrcMatrices, crc32c, deriveCrcMatrices, referenceUpdate, type CrcMatrices } from '../../ts-model/crc32c';
import { withSeed, type Rng } from '../support/random';
import { IrEval } from './ir-eval';

/**
 * The CRC block's algebra, without a simulator. The block (hdl-gen/blocks/crc32c.ts) feeds a beat
 * of k valid octets (lanes 0..k−1) by shifting the lanes up by j = W − k and first moving the CRC
 * register j zero-octet steps back (Z^−j), then applying the single W-octet matrix pair. Here the
 * same computation is done in TypeScript — stage by stage, as the RTL does — and compared with the
 * byte-wise CRC update; then the built module's own expression tree is evaluated (ir-eval.ts) on
 * random frames.
 */

const WIDTHS = [1, 2, 4, 8, 16, 32, 64] as const;
const Z1 = deriveCrcMatrices(CRC32C, 1).stateRows;
const Z_INV = invert(Z1);

function randomMatrix(r: Rng): Gf2Matrix {
  return Array.from({ length: 32 }, () => r.u32());
}

/** A random invertible matrix: a product of random elementary row operations. */
function randomInvertible(r: Rng): Gf2Matrix {
  const m = [...identity32];
  for (let n = 0; n < 200; n++) {
    const i = r.int(0, 31);
    const j = r.int(0, 31);
    if (i !== j) m[i] = (m[i]! ^ m[j]!) >>> 0;
    else {
      const k = r.int(0, 31);
      [m[i], m[k]] = [m[k]!, m[i]!];
    }
  }
  return m;
}

describe('GF(2) helpers', () => {
  test('identity is neutral for mul and apply', () => {
    withSeed(0x6f201, (r) => {
      for (let n = 0; n < 20; n++) {
        const a = randomMatrix(r);
        expect(mul(identity32, a)).toEqual(a);
        expect(mul(a, identity32)).toEqual(a);
        const x = r.u32();
        expect(apply(identity32, x)).toBe(x);
      }
    });
  });

  test('mul composes apply: (a·b) x = a (b x), and is associative', () => {
    withSeed(0x6f202, (r) => {
      for (let n = 0; n < 50; n++) {
        const a = randomMatrix(r);
        const b = randomMatrix(r);
        const c = randomMatrix(r);
        const x = r.u32();
        expect(apply(mul(a, b), x)).toBe(apply(a, apply(b, x)));
        expect(mul(mul(a, b), c)).toEqual(mul(a, mul(b, c)));
      }
    });
  });

  test('apply(Z, s) is the CRC register after one zero octet', () => {
    withSeed(0x6f203, (r) => {
      for (let n = 0; n < 100; n++) {
        const s = r.u32();
        expect(apply(Z1, s)).toBe(referenceUpdate(CRC32C, s, new Uint8Array(1)));
      }
    });
  });

  test('inverse · matrix = matrix · inverse = identity: Z, its powers and random invertible matrices', () => {
    expect(mul(Z_INV, Z1)).toEqual(identity32);
    expect(mul(Z1, Z_INV)).toEqual(identity32);
    for (const n of [2, 4, 8, 32, 63]) {
      const zn = power(Z1, n);
      expect(mul(invert(zn), zn)).toEqual(identity32);
      expect(mul(power(Z_INV, n), zn)).toEqual(identity32);
    }
    withSeed(0x6f204, (r) => {
      for (let n = 0; n < 30; n++) {
        const a = randomInvertible(r);
        const inv = invert(a);
        expect(mul(inv, a)).toEqual(identity32);
        expect(mul(a, inv)).toEqual(identity32);
      }
    });
    expect(invert(identity32)).toEqual(identity32);
  });

  test('invert does not modify its argument and throws on a singular matrix', () => {
    const z = [...Z1];
    invert(z);
    expect(z).toEqual([...Z1]);
    const singular = [...identity32];
    singular[5] = singular[7]!;
    expect(() => invert(singular)).toThrow(/singular/);
    expect(() => invert(new Array(32).fill(0))).toThrow(/singular/);
  });

  test('power(a, n) is the n-fold product (n = 0..70)', () => {
    withSeed(0x6f205, (r) => {
      const a = randomMatrix(r);
      let p: Gf2Matrix = identity32;
      for (let n = 0; n <= 70; n++) {
        expect(power(a, n)).toEqual(p);
        p = mul(p, a);
      }
    });
  });

  test('power(Z, n) is the state matrix of an n-octet update (deriveCrcMatrices)', () => {
    for (let n = 1; n <= 64; n++) expect(power(Z1, n)).toEqual(deriveCrcMatrices(CRC32C, n).stateRows);
  });
});

/** j = W − k from tkeep, the way the block computes it: the top valid lane, then log2(W) OR bits. */
function shiftFromKeep(W: number, keep: bigint): number {
  const bit = (i: number) => Number((keep >> BigInt(i)) & 1n);
  const top = Array.from({ length: W }, (_, i) => (i === W - 1 ? bit(i) : bit(i) & (bit(i + 1) ^ 1)));
  let j = 0;
  for (let b = 0; b < Math.log2(W); b++) {
    const lanes = top.filter((_, i) => ((W - 1 - i) >> b) & 1);
    if (lanes.some((x) => x === 1)) j |= 1 << b;
  }
  return j;
}

/** The block's beat update, staged like the RTL: per bit b of j, lanes up by 2^b and Z^−2^b. */
function blockUpdate(full: CrcMatrices, W: number, state: number, octets: Uint8Array): number {
  const k = octets.length;
  const keep = (1n << BigInt(k)) - 1n;
  const j = shiftFromKeep(W, keep);
  expect(j).toBe(W - k);
  let lanes = new Uint8Array(W);
  lanes.set(octets, 0);
  let reg = state;
  for (let b = 0; b < Math.log2(W); b++) {
    if (!((j >> b) & 1)) continue;
    const by = 1 << b;
    const shifted = new Uint8Array(W);
    shifted.set(lanes.subarray(0, W - by), by);
    lanes = shifted;
    reg = apply(power(Z_INV, by), reg);
  }
  return applyCrcMatrices(full, reg, lanes);
}

describe('the block algebra: Z^-j rewind, lanes up by j, one W-octet matrix pair', () => {
  test.each(WIDTHS.map((w) => [w]))('W = %i: equals the byte-wise update for every k in 1..W', (W) => {
    const full = deriveCrcMatrices(CRC32C, W);
    withSeed(0x6f300 + W, (r) => {
      for (let k = 1; k <= W; k++) {
        for (let n = 0; n < 4; n++) {
          const state = r.u32();
          const octets = r.bytes(k);
          expect(blockUpdate(full, W, state, octets), `W=${W} k=${k} state=${state.toString(16)}`).toBe(referenceUpdate(CRC32C, state, octets));
        }
      }
    });
  });

  test('the thermometer decode gives j = W − k for every k (and the shift stays within log2(W) bits)', () => {
    for (const W of WIDTHS) {
      for (let k = 1; k <= W; k++) expect(shiftFromKeep(W, (1n << BigInt(k)) - 1n)).toBe(W - k);
    }
  });

  test.each(WIDTHS.map((w) => [w]))('W = %i: a frame of beats with any k per beat gives the CRC-32C of the frame', (W) => {
    const full = deriveCrcMatrices(CRC32C, W);
    withSeed(0x6f400 + W, (r) => {
      for (let f = 0; f < 5; f++) {
        const beats = Array.from({ length: r.int(1, 6) }, () => r.bytes(r.int(1, W)));
        let reg = CRC32C.init;
        for (const b of beats) reg = blockUpdate(full, W, reg, b);
        const frame = new Uint8Array(beats.reduce<number[]>((acc, b) => [...acc, ...b], []));
        expect((reg ^ CRC32C.xorOut) >>> 0).toBe(crc32c(frame));
      }
    });
  });
});

/** Drives the built module through the IR evaluator; returns the CRC transfers seen on m_axis. */
function runFrames(W: number, frames: readonly { beats: { keep: bigint; data: Uint8Array }[] }[], r: Rng): { crc: number; err: number }[] {
  const sim = new IrEval(crc32cModule(W));
  sim.setInput('clk', 0);
  sim.setInput('rst', 0);
  const beats = frames.flatMap((f) => f.beats.map((b, i) => ({ ...b, last: i === f.beats.length - 1 })));
  const out: { crc: number; err: number }[] = [];
  let i = 0;
  for (let cycle = 0; cycle < 10 * beats.length + 10 && (i < beats.length || out.length < frames.length); cycle++) {
    const b = beats[i];
    const valid = b !== undefined && r.bool(0.8);
    let word = 0n;
    if (b) for (let lane = W - 1; lane >= 0; lane--) word = (word << 8n) | BigInt(b.data[lane] ?? 0);
    sim.setInput('s_axis_tdata', word);
    sim.setInput('s_axis_tkeep', b?.keep ?? 0n);
    sim.setInput('s_axis_tlast', b?.last ? 1 : 0);
    sim.setInput('s_axis_tvalid', valid ? 1 : 0);
    sim.setInput('m_axis_tready', r.bool(0.7) ? 1 : 0);
    if (sim.get('m_axis_tvalid') && sim.get('m_axis_tready')) out.push({ crc: Number(sim.get('m_axis_tdata')), err: Number(sim.get('m_axis_tuser')) });
    if (valid && sim.get('s_axis_tready')) i++;
    sim.step();
  }
  return out;
}

describe('the built module, evaluated from its IR', () => {
  test.each(WIDTHS.map((w) => [w]))('W = %i: a beat of any k in 0..W continuing from any register gives the byte-wise update', (W) => {
    const sim = new IrEval(crc32cModule(W));
    withSeed(0x6f500 + W, (r) => {
      for (let k = 0; k <= W; k++) {
        const state = r.u32();
        const data = r.bytes(W);
        let word = 0n;
        for (let lane = W - 1; lane >= 0; lane--) word = (word << 8n) | BigInt(data[lane]!);
        // Out of reset (the output skid buffer is ready a cycle later), the CRC component's loop
        // register holds `state` and the beat continues the frame.
        sim.reset();
        sim.setInput('clk', 0);
        sim.setInput('rst', 0);
        sim.setInput('m_axis_tready', 1);
        sim.setInput('s_axis_tvalid', 0);
        sim.step();
        sim.setReg('crc_crc', state);
        sim.setReg('in_frame', 1);
        sim.setInput('s_axis_tdata', word);
        sim.setInput('s_axis_tkeep', (1n << BigInt(k)) - 1n);
        sim.setInput('s_axis_tlast', 0);
        sim.setInput('s_axis_tvalid', 1);
        expect(sim.get('keep_ok')).toBe(1n);
        sim.step();
        sim.setInput('s_axis_tvalid', 0);
        for (let i = 0; i < 3; i++) sim.step();
        expect(Number(sim.get('crc_crc')), `W=${W} k=${k}`).toBe(referenceUpdate(CRC32C, state, data.subarray(0, k)));
      }
      if (W > 1) {
        sim.setInput('s_axis_tkeep', 0b10n);
        expect(sim.get('keep_ok')).toBe(0n);
      }
    });
  });

  test.each(WIDTHS.map((w) => [w]))('W = %i: random frames with back-pressure give one CRC-32C per frame; a non-contiguous tkeep sets tuser', (W) => {
    withSeed(0x6f600 + W, (r) => {
      const frames: { beats: { keep: bigint; data: Uint8Array }[]; bytes: Uint8Array; bad: boolean }[] = [];
      for (let f = 0; f < 6; f++) {
        const beats: { keep: bigint; data: Uint8Array }[] = [];
        const bytes: number[] = [];
        let bad = false;
        const n = r.int(1, 4);
        for (let b = 0; b < n; b++) {
          const k = r.bool(0.6) ? W : r.int(1, W);
          const data = r.bytes(W);
          beats.push({ keep: (1n << BigInt(k)) - 1n, data });
          bytes.push(...data.subarray(0, k));
        }
        if (r.bool(0.2)) beats.push({ keep: 0n, data: r.bytes(W) }); // an empty last beat
        if (W > 1 && f === 3) {
          beats[0] = { ...beats[0]!, keep: 0b10n };
          bad = true;
        }
        frames.push({ beats, bytes: Uint8Array.from(bytes), bad });
      }
      const out = runFrames(W, frames, r);
      expect(out).toHaveLength(frames.length);
      frames.forEach((f, i) => {
        expect(out[i]!.err, `frame ${i} tuser`).toBe(f.bad ? 1 : 0);
        if (!f.bad) expect(out[i]!.crc, `frame ${i} CRC`).toBe(crc32c(f.bytes));
      });
    });
  });
});

/**
 * The component's 'check' form (lib/crc.ts) on its own: the beat stays front-aligned, the loop
 * keeps S = Z^(W−k) · crc, `matches` is the residue test and `state` continues a frame after
 * another stream's beats (a context switch). Two streams take turns; a switch loads the next
 * stream's saved state (read at the output after its last beat), right behind the other stream's
 * beats or after a gap.
 */
function checkProbe(W: number, unit: 1 | 4, inputRegister: boolean): Module {
  const m = new ModuleBuilder(`crc_check_w${W}_u${unit}`, "The CRC component's check form behind ports.");
  m.clockDomain('sync', m.input('clk', 1), m.input('rst', 1));
  const opts = { params: CRC32C, bytes: W, unit, form: 'check', inputRegister } as const;
  const countWidth = Math.ceil(Math.log2(W / unit + 1));
  const crc = crcPipeline(m, 'crc', opts, {
    valid: m.input('in_valid', 1),
    data: m.input('in_data', 8 * W),
    count: m.input('in_count', countWidth),
    start: m.input('in_start', 1),
    load: m.input('in_load', 1),
    state: m.input('in_state', crcStateWidth(opts)),
  });
  m.assign(m.output('out_valid', 1), crc.valid);
  m.assign(m.output('out_reg', 32), crc.crc);
  m.assign(m.output('out_matches', 1), crc.matches!);
  m.assign(m.output('out_state', crcStateWidth(opts)), crc.state!);
  m.assign(m.output('busy', 1), crc.busy);
  return m.build();
}

describe("the CRC component's 'check' form, evaluated from its IR", () => {
  test.each([
    [8, 1, true],
    [16, 4, true],
    [16, 4, false],
    [76, 4, true],
    [64, 1, true], // 65 counts: the registers hold them one-hot
  ] as const)('W = %i, unit %i, input register %s: register, residue test and saved state against the byte-wise CRC over interleaved frames', (W, unit, inputRegister) => {
    const sim = new IrEval(checkProbe(W, unit, inputRegister));
    const N = W / unit;
    const zOf = (octets: number) => power(Z1, octets);
    sim.setInput('clk', 0);
    sim.setInput('rst', 0);
    withSeed(0x6f700 + W, (r) => {
      // Each stream: the beats of its frames (a frame, then its CRC field, a few corrupted), the
      // reference register and the component's saved state.
      const streams = [0, 1].map(() => ({ beats: [] as { data: Uint8Array; start: boolean }[], reg: 0, saved: 0n }));
      for (const st of streams) {
        for (let f = 0; f < (N > 32 ? 8 : 20); f++) {
          const body = r.bytes(unit * r.int(0, 3 * N));
          const field = new Uint8Array(4);
          new DataView(field.buffer).setUint32(0, crc32c(body), true);
          const frame = new Uint8Array([...body, ...field]);
          if (r.bool(0.2)) frame[r.int(0, frame.length - 1)]! ^= 1 << r.int(0, 7);
          for (let at = 0, first = true; at < frame.length || first; first = false) {
            const k = Math.min(unit * r.int(first ? 1 : 0, N), frame.length - at);
            st.beats.push({ data: frame.subarray(at, at + k), start: first });
            at += k;
          }
        }
      }
      // Beats go in back to back or with gaps, a switch too.
      const inFlight: { s: (typeof streams)[number]; reg: number; octets: number }[] = [];
      let inPipe = -1;
      let checked = 0;
      let matched = 0;
      let loads = 0;
      let loadsBehind = 0;
      let sq: number | undefined;
      while (streams.some((s) => s.beats.length) || inFlight.length) {
        // Mostly the stream in the pipeline goes on; else the other one, once the pipeline is empty.
        const live = [0, 1].filter((i) => streams[i]!.beats.length);
        if (sq === undefined || !live.includes(sq)) sq = live.includes(inPipe) && (live.length === 1 || r.bool(0.5)) ? inPipe : live.find((i) => i !== inPipe);
        // A stream's next beat waits until its last one is out (its saved state); another
        // stream's beats may still be in the pipeline (a load right behind them).
        const next = sq === undefined ? undefined : streams[sq];
        const go = next !== undefined && r.bool(0.7) && (sq === inPipe || !inFlight.some((f) => f.s === next));
        const s = streams[sq ?? 0]!;
        const beat = go ? s.beats.shift()! : { data: r.bytes(unit * r.int(0, N)), start: r.bool(0.5) };
        const load = sq !== inPipe && !beat.start;
        let word = 0n;
        for (let lane = W - 1; lane >= 0; lane--) word = (word << 8n) | BigInt(beat.data[lane] ?? r.int(0, 255));
        sim.setInput('in_valid', go ? 1 : 0);
        sim.setInput('in_data', word);
        sim.setInput('in_count', beat.data.length / unit);
        sim.setInput('in_start', beat.start ? 1 : 0);
        sim.setInput('in_load', go ? (load ? 1 : 0) : r.int(0, 1)); // ignored without a beat
        sim.setInput('in_state', s.saved);
        sim.step();
        if (go) {
          sq = undefined;
          s.reg = referenceUpdate(CRC32C, beat.start ? CRC32C.init : s.reg, beat.data);
          inFlight.push({ s, reg: s.reg, octets: beat.data.length });
          if (load) loads++;
          if (load && inFlight.length > 1) loadsBehind++;
          inPipe = streams.indexOf(s);
        }
        if (!sim.get('out_valid')) continue;
        const want = inFlight.shift()!;
        const at = `W=${W} beat ${checked}: ${want.octets} octets`;
        expect(Number(sim.get('out_reg')), at).toBe(apply(zOf(W - want.octets), want.reg));
        expect(sim.get('out_matches'), at).toBe(want.reg === CRC32C.residue >>> 0 ? 1n : 0n);
        want.s.saved = sim.get('out_state');
        expect(Number(want.s.saved >> 32n), at).toBe(want.octets / unit);
        checked++;
        if (want.reg === CRC32C.residue >>> 0) matched++;
      }
      expect(loads).toBeGreaterThan(5);
      expect(loadsBehind).toBeGreaterThan(2);
      expect(matched).toBeGreaterThan(10);
    });
  });
});
