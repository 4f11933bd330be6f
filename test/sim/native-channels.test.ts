import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { AxisMonitor } from '../../sim/cocotb/axis';
import type { AxisFrame } from '../../sim/cocotb/axis-bus';
import { NativeAxisSink } from '../../sim/cocotb/native-axis-sink';
import { NativeRecordSink } from '../../sim/cocotb/native-record-sink';
import { always, every, never, pattern, random, Chance, withStalls, type PauseGen } from '../../sim/cocotb/pause';
import { RecordSink } from '../../sim/cocotb/record-sink';
import { RecordSource } from '../../sim/cocotb/record-source';
import { Testbench } from '../../sim/cocotb/testbench';
import type { Sampled } from '../../sim/cocotb/record-group';
import { buildModel, type CompiledModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { hex, withSeed, type Rng } from '../support/random';
import { SKID_DATA_WIDTH, StabilityChecker, recordSliceBuild, skidRegisterBuild } from './fixtures';

const OCTETS = SKID_DATA_WIDTH / 8;
const MAX_CYCLES = 400_000;

/** Pause makers: the same seeds give the TypeScript and the native run the same sequence. */
type Pauses = { readonly name: string; readonly source: (seed: number) => PauseGen; readonly sink: (seed: number) => PauseGen };
const PAUSES: readonly Pauses[] = [
  { name: 'never / never', source: () => never(), sink: () => never() },
  { name: 'random 30% / random 30%', source: (s) => random(s, 0.3), sink: (s) => random(s, 0.3) },
  { name: 'random 10% / random 70% (back-pressure)', source: (s) => random(s, 0.1), sink: (s) => random(s, 0.7) },
  { name: 'pattern 1100 / every 3', source: () => pattern('1100'), sink: () => every(3) },
  { name: 'every 2 / pattern 0111010', source: () => every(2), sink: () => pattern('0111010') },
  { name: 'random 50% / always, then never', source: (s) => random(s, 0.5), sink: () => always() },
];

/** What a run shows of its handshakes: the frames out (with cycles), the input beats' cycles, the count. */
interface Run {
  readonly cycles: number;
  readonly frames: readonly AxisFrame[];
  readonly inputBeats: readonly number[];
  readonly modelCycles: number;
}

interface Frame {
  readonly data: Uint8Array;
  readonly tuser: number;
}

function randomFrames(r: Rng, n: number): Frame[] {
  return Array.from({ length: n }, () => ({ data: r.bytes(r.int(1, 100)), tuser: r.int(0, 1) }));
}

describe('native channels replay the TypeScript drivers cycle for cycle (axis_skid_register)', () => {
  let compiled: CompiledModel;
  const open: Testbench[] = [];
  beforeAll(() => {
    compiled = buildModel(skidRegisterBuild());
  });
  afterEach(() => {
    for (const tb of open.splice(0)) tb.close();
  });
  const bench = (): Testbench => {
    const tb = new Testbench(SimModel.open(compiled));
    open.push(tb);
    return tb;
  };

  /**
   * One run: `kind` chooses the drivers; `watch` adds a TypeScript monitor on the input side (so a
   * native run steps cycle by cycle, its channels inside each tick), else a native run is batched.
   * `release`: the sink's pause after 200 cycles.
   */
  function run(kind: 'typescript' | 'native' | 'native source' | 'native sink', p: Pauses, seeds: readonly [number, number], frames: readonly Frame[], watch: boolean, release?: () => PauseGen): Run {
    const tb = bench();
    const nativeSource = kind === 'native' || kind === 'native source';
    const nativeSink = kind === 'native' || kind === 'native sink';
    const source = nativeSource ? tb.source('s_axis', { pause: p.source(seeds[0]), native: true }) : tb.source('s_axis', { pause: p.source(seeds[0]) });
    const sink = nativeSink ? tb.sink('m_axis', { pause: p.sink(seeds[1]), native: true }) : tb.sink('m_axis', { pause: p.sink(seeds[1]) });
    const monitor = watch ? tb.add(new AxisMonitor(tb.model, 's_axis')) : undefined;
    const checker = watch ? tb.add(new StabilityChecker(tb.model)) : undefined;
    for (const f of frames) source.send(f.data, f.tuser);
    tb.reset();
    let cycles = 0;
    if (release) {
      tb.run(200);
      expect(source.sentCount).toBeLessThan(frames.length);
      sink.setPause(release());
      cycles = 200;
    }
    const done = sink instanceof NativeAxisSink ? sink.received(frames.length) : () => sink.receivedCount >= frames.length;
    cycles += tb.until(done, MAX_CYCLES, `${frames.length} frames`);
    expect(source.idle).toBe(true);
    expect(source.sentCount).toBe(frames.length);
    expect(source.pending).toBe(0);
    if (checker) expect(checker.violations).toBe(0);
    const out = sink.drain();
    expect(out.map((f) => hex(f.data))).toEqual(frames.map((f) => hex(f.data)));
    expect(out.map((f) => f.tuser)).toEqual(frames.map((f) => f.tuser));
    return { cycles, frames: out, inputBeats: monitor ? monitor.beats.map((b) => b.cycle) : [], modelCycles: tb.model.cycles };
  }

  test.each(PAUSES.map((p, i) => ({ ...p, salt: i + 1 })))('same frames at the same cycles, batched and cycle by cycle ($name)', (p) =>
    withSeed(p.salt, (r) => {
      const seeds = [r.u32(), r.u32()] as const;
      const frames = randomFrames(r, 200);
      const release = p.name.includes('then never') ? () => never() : undefined;
      const ts = run('typescript', p, seeds, frames, true, release);
      expect(ts.inputBeats.length).toBeGreaterThan(frames.length);
      for (const kind of ['native', 'native source', 'native sink'] as const) {
        const stepped = run(kind, p, seeds, frames, true, release);
        expect(stepped, kind).toEqual(ts);
      }
      const batched = run('native', p, seeds, frames, false, release);
      expect(batched).toEqual({ ...ts, inputBeats: [] });
    }),
  );

  test('payload and tvalid hold while tvalid && !tready (AXI4-Stream §2.2.1), under heavy back-pressure', () =>
    withSeed(20, (r) => {
      const tb = bench();
      const source = tb.source('s_axis', { pause: random(r.u32(), 0.3), native: true });
      const sink = tb.sink('m_axis', { pause: random(r.u32(), 0.8), native: true });
      const checker = tb.add(new StabilityChecker(tb.model));
      const frames = randomFrames(r, 100);
      for (const f of frames) source.send(f.data, f.tuser);
      tb.reset();
      tb.until(sink.received(frames.length), MAX_CYCLES, 'the frames');
      expect(checker.stalls).toBeGreaterThan(100);
      expect(checker.violations).toBe(0);
    }));

  test('explicit beats with any tkeep, null beats and a beat count; a native stop on the source side', () => {
    const tb = bench();
    const source = tb.source('s_axis', { native: true });
    const sink = tb.sink('m_axis', { native: true });
    const lanes = Uint8Array.from({ length: OCTETS }, (_, i) => 0x10 + i);
    source.sendBeats([{ data: lanes, tkeep: 0b10100101 }, { data: lanes, tkeep: 0 }, { data: lanes.subarray(0, 3), tlast: true, tuser: 1 }]);
    source.send(new Uint8Array(OCTETS * 2 + 1).fill(7), 1);
    tb.reset();
    const cycles = tb.until(source.sent(2), 100, 'both frames in');
    expect(source.beatCount).toBe(6);
    expect(source.frameCycle).toBe(tb.model.cycles);
    expect(cycles).toBe(7); // s_axis_tready is registered: low in the first cycle after reset
    tb.run(5);
    expect(tb.stepped).toBe(12);
    expect(sink.beatCount).toBe(6);
    expect(sink.available).toBe(2);
    const first = sink.recv()!;
    expect([...first.data]).toEqual([0x10, 0x12, 0x15, 0x17, 0x10, 0x11, 0x12]);
    expect(first.tuser).toBe(1);
    expect(sink.available).toBe(1);
    expect(sink.recv()!.data).toEqual(new Uint8Array(OCTETS * 2 + 1).fill(7));
    expect(sink.recv()).toBeUndefined();
  });

  test('beats: true keeps every beat as an AxisMonitor on the same interface records it, batched', () =>
    withSeed(21, (r) => {
      const [a, b] = [r.u32(), r.u32()];
      const frames = randomFrames(r, 100);
      const tsBench = bench();
      const tsSource = tsBench.source('s_axis', { pause: random(a, 0.3) });
      const tsSink = tsBench.sink('m_axis', { pause: random(b, 0.4) });
      const monitor = tsBench.add(new AxisMonitor(tsBench.model, 'm_axis'));
      const nBench = bench();
      const nSource = nBench.source('s_axis', { pause: random(a, 0.3), native: true });
      const nSink = nBench.sink('m_axis', { pause: random(b, 0.4), native: true, beats: true });
      for (const f of frames) {
        tsSource.send(f.data, f.tuser);
        nSource.send(f.data, f.tuser);
      }
      tsBench.reset();
      nBench.reset();
      tsBench.until(() => tsSink.receivedCount >= frames.length, MAX_CYCLES, 'the frames');
      nBench.until(nSink.received(frames.length), MAX_CYCLES, 'the frames');
      expect(nSink.beats).toEqual([]); // filled from the log when frames are read
      expect(nSink.drain()).toEqual(tsSink.drain());
      expect(monitor.beats.length).toBeGreaterThan(frames.length);
      expect(nSink.beats).toEqual(monitor.beats);
    }));

  test('a pause generator carries on from where it stands; ones C++ cannot replay are refused', () => {
    const tb = bench();
    const g = random(99, 0.4);
    for (let i = 0; i < 17; i++) g.next();
    const twin = random(99, 0.4);
    for (let i = 0; i < 17; i++) twin.next();
    const src = tb.source('s_axis', { pause: g, native: true });
    expect(() => src.setPause(new Chance({ bool: () => true }, 0.5))).toThrow(/pause generators/);
    expect(() => src.setPause(withStalls(never(), never(), 3))).toThrow(/pause generators/);
    expect(() => src.send(new Uint8Array(4), 0, () => {})).toThrow(/call back/);
    // The native sequence from here on is the twin's: sent one octet per beat, a beat offered in a
    // cycle iff the twin does not pause in it (the skid register accepts every cycle at first).
    const sink = tb.sink('m_axis', { native: true });
    const mon = tb.add(new AxisMonitor(tb.model, 's_axis'));
    for (let i = 0; i < 6; i++) src.send(Uint8Array.of(i));
    tb.reset();
    tb.run(20);
    const expected: number[] = [];
    for (let c = 0; c < 20 && expected.length < 6; c++) if (!twin.next()) expected.push(c + 4);
    expect(mon.beats.map((b) => b.cycle)).toEqual(expected);
    expect(sink.receivedCount).toBe(6);
  });
});

describe('native channels in a waveform (axis_skid_register built with trace)', () => {
  test('a batched native run dumps the same VCD as the TypeScript drivers, a window opening and closing mid-run', () =>
    withSeed(30, (r) => {
      const compiled = buildModel(skidRegisterBuild({ trace: true }));
      const [a, b] = [r.u32(), r.u32()];
      const frames = randomFrames(r, 40);
      const dir = mkdtempSync(join(tmpdir(), 'native-vcd-'));
      const dump = (native: boolean): string => {
        const tb = new Testbench(SimModel.open(compiled));
        const file = join(dir, `${native}.vcd`);
        tb.model.waveform(file, { from: 50, to: 300 });
        const source = native ? tb.source('s_axis', { pause: random(a, 0.3), native: true }) : tb.source('s_axis', { pause: random(a, 0.3) });
        const sink = native ? tb.sink('m_axis', { pause: random(b, 0.4), native: true }) : tb.sink('m_axis', { pause: random(b, 0.4) });
        for (const f of frames) source.send(f.data, f.tuser);
        tb.reset();
        tb.until(sink instanceof NativeAxisSink ? sink.received(frames.length) : () => sink.receivedCount >= frames.length, MAX_CYCLES, 'the frames');
        expect(tb.model.cycles).toBeGreaterThan(300);
        tb.close();
        return readFileSync(file, 'utf8').replace(/\$date[\s\S]*?\$end/, '');
      };
      const ts = dump(false);
      expect(ts).toMatch(/^#200000$/m); // the window's start: cycle 50 at 4000 ps a cycle
      expect(dump(true)).toBe(ts);
      rmSync(dir, { recursive: true });
    }));
});

describe('native record sink (record_slice)', () => {
  let compiled: CompiledModel;
  beforeAll(() => {
    compiled = buildModel(recordSliceBuild());
  });

  test('the same records at the same cycles as RecordSink, under random gaps and back-pressure', () =>
    withSeed(0x7ec, (r) => {
      const reqs = Array.from({ length: 300 }, () => ({ kind: r.int(0, 7), len: r.u32(), addr: r.u64(), err: r.int(0, (1 << 14) - 1) }));
      const [gap, pause] = [r.u32(), r.u32()];
      const runOnce = (native: boolean): Array<{ f: Sampled; cycle: number }> => {
        const tb = new Testbench(SimModel.open(compiled));
        const source = tb.add(new RecordSource(tb.model, 's_req', { gap: random(gap, 0.3) }));
        const o = { pause: random(pause, 0.5), map: (f: Sampled, cycle: number) => ({ f, cycle }) };
        const sink = native ? new NativeRecordSink(tb.model, 'm_rsp', o) : tb.add(new RecordSink(tb.model, 'm_rsp', o));
        source.pushAll(reqs);
        tb.reset();
        tb.until(() => sink.records.length >= reqs.length, 20_000, 'every record');
        const out = sink.records;
        tb.close();
        return out;
      };
      const ts = runOnce(false);
      expect(ts.map((x) => x.f)).toEqual(reqs.map((q) => ({ ...q, addr: q.addr })));
      expect(runOnce(true)).toEqual(ts);
    }));
});
