import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { AxisMonitor, AxisSink, AxisSource } from '../../sim/cocotb/axis';
import { always, every, never, pattern, random, type PauseGen } from '../../sim/cocotb/pause';
import { Testbench } from '../../sim/cocotb/testbench';
import { buildModel, type CompiledModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { hex, withSeed } from '../support/random';
import { SKID_DATA_WIDTH, StabilityChecker, skidRegisterBuild } from './fixtures';

const FRAMES = 500;
const MAX_FRAME_OCTETS = 100;
const OCTETS = SKID_DATA_WIDTH / 8;
/** Generous: even with both sides paused most of the time, 500 frames fit easily. */
const MAX_CYCLES = 400_000;

describe('AXI-Stream skid register driven by AxisSource and AxisSink', () => {
  let compiled: CompiledModel;
  let tb: Testbench | undefined;

  beforeAll(() => {
    compiled = buildModel(skidRegisterBuild());
  });
  afterEach(() => tb?.close());

  const bench = (sourcePause: PauseGen, sinkPause: PauseGen): { tb: Testbench; source: AxisSource; sink: AxisSink } => {
    tb = new Testbench(SimModel.open(compiled));
    const source = tb.source('s_axis', { pause: sourcePause });
    const sink = tb.sink('m_axis', { pause: sinkPause });
    tb.reset();
    return { tb, source, sink };
  };

  test.each([
    { name: 'no pauses', salt: 1, source: () => never(), sink: () => never() },
    { name: 'random 30% / 30%', salt: 2, source: (s: number) => random(s, 0.3), sink: (s: number) => random(s + 1, 0.3) },
    { name: 'random 10% source, 70% sink', salt: 3, source: (s: number) => random(s, 0.1), sink: (s: number) => random(s + 1, 0.7) },
    { name: 'pattern 1100 source, every 3rd sink', salt: 4, source: () => pattern('1100'), sink: () => every(3) },
  ])('500 random frames come out intact and in order ($name)', ({ salt, source: sourcePause, sink: sinkPause }) => {
    withSeed(salt, (r) => {
      const { tb, source, sink } = bench(sourcePause(r.u32()), sinkPause(r.u32()));
      const checker = tb.add(new StabilityChecker(tb.model));
      const sent = Array.from({ length: FRAMES }, () => ({ data: r.bytes(r.int(1, MAX_FRAME_OCTETS)), tuser: r.int(0, 1) }));
      for (const f of sent) source.send(f.data, f.tuser);
      tb.until(() => sink.receivedCount === FRAMES, MAX_CYCLES, `${FRAMES} frames through the skid register`);
      const got = sink.drain();
      expect(got.length).toBe(FRAMES);
      got.forEach((f, i) => {
        expect(hex(f.data), `frame ${i}`).toBe(hex(sent[i]!.data));
        expect(f.tuser, `frame ${i} tuser`).toBe(sent[i]!.tuser);
      });
      expect(source.idle).toBe(true);
      expect(checker.violations).toBe(0);
    });
  });

  test('full rate without pauses: one beat per cycle once the pipeline is full', () => {
    const { tb, source, sink } = bench(never(), never());
    for (let i = 0; i < 10; i++) source.send(new Uint8Array(OCTETS * 10).fill(i));
    const cycles = tb.until(() => sink.receivedCount === 10, 1000, '10 frames');
    expect(sink.beatCount).toBe(100);
    // Two register stages: tready registered after reset, then the output register.
    expect(cycles).toBeLessThanOrEqual(100 + 3);
  });

  test('a sink that never accepts stalls the source after the skid buffer fills', () => {
    const { tb, source, sink } = bench(never(), always());
    source.send(new Uint8Array(OCTETS * 8).fill(0xaa));
    tb.run(50);
    expect(sink.receivedCount).toBe(0);
    expect(source.pending).toBe(1);
    sink.setPause(never());
    tb.until(() => sink.receivedCount === 1, 100, 'the stalled frame');
    expect(sink.recv()?.data).toEqual(new Uint8Array(OCTETS * 8).fill(0xaa));
  });

  test('explicit beats carry any tkeep pattern; the sink keeps only the marked octets', () => {
    const { tb, source, sink } = bench(never(), never());
    const monitor = tb.monitor('m_axis');
    const lanes = Uint8Array.from({ length: OCTETS }, (_, i) => 0x10 + i);
    source.sendBeats([
      { data: lanes, tkeep: 0b10100101 },
      { data: lanes, tkeep: 0 },
      { data: lanes.subarray(0, 3), tlast: true, tuser: 1 },
    ]);
    tb.until(() => sink.receivedCount === 1, 100, 'the sparse frame');
    const frame = sink.recv();
    expect([...frame!.data]).toEqual([0x10, 0x12, 0x15, 0x17, 0x10, 0x11, 0x12]);
    expect(frame!.tuser).toBe(1);
    expect(monitor.beats.map((b) => [b.tkeep, b.tlast])).toEqual([[0xa5n, false], [0n, false], [0b111n, true]]);
    expect(monitor.frames()).toEqual([frame]);
    expect(monitor.beats[1]!.cycle).toBe(monitor.beats[0]!.cycle + 1);
  });

  test('a monitor on the input side sees the same beats the sink receives', () => {
    withSeed(5, (r) => {
      const { tb, source, sink } = bench(random(r.u32(), 0.5), random(r.u32(), 0.5));
      const input = new AxisMonitor(tb.model, 's_axis');
      tb.add(input);
      const frames = Array.from({ length: 20 }, () => r.bytes(r.int(1, 40)));
      for (const f of frames) source.send(f);
      tb.until(() => sink.receivedCount === frames.length, 10_000, '20 frames');
      expect(input.frames().map((f) => hex(f.data))).toEqual(frames.map(hex));
      expect(sink.drain().map((f) => hex(f.data))).toEqual(frames.map(hex));
    });
  });
});
