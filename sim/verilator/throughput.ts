/**
 * Measures how fast TypeScript can drive a Verilated model: the AXI-Stream skid register fixture
 * (64-bit tdata) with an AxisSource and AxisSink that handshake every cycle, no pauses.
 * Not a test: wall-clock numbers are noisy on shared machines. Run with
 *   npx tsx sim/verilator/throughput.ts [cycles]
 */
import path from 'node:path';
import { axisPortSpecs } from '../cocotb/axis-ports';
import { Testbench } from '../cocotb/testbench';
import { PACKAGE_ROOT } from '../../hdl-gen/gen/paths';
import { buildModel } from './build';
import { SimModel } from './model';

const DEFAULT_CYCLES = 2_000_000;
const DATA_WIDTH = 64;
/** Frames in flight: enough that the source never runs dry between refills. */
const FRAMES_AHEAD = 64;
const FRAME_OCTETS = 256;
const WARMUP_CYCLES = 100_000;
const MS_PER_S = 1000;

function main(): void {
  const cycles = Number(process.argv[2] ?? DEFAULT_CYCLES);
  const t0 = performance.now();
  const compiled = buildModel({
    top: 'axis_skid_register',
    sources: [path.join(PACKAGE_ROOT, 'test', 'fixtures', 'verilog', 'axis_skid_register.v')],
    ports: [
      { name: 'clk', direction: 'input', width: 1 },
      { name: 'rst', direction: 'input', width: 1 },
      ...axisPortSpecs('s_axis', 'in', { dataWidth: DATA_WIDTH }),
      ...axisPortSpecs('m_axis', 'out', { dataWidth: DATA_WIDTH }),
    ],
  });
  console.log(`build: ${(performance.now() - t0).toFixed(0)} ms (${compiled.cached ? 'cached' : 'cold'}) ${compiled.dir}`);

  const tb = new Testbench(SimModel.open(compiled));
  const source = tb.source('s_axis');
  const sink = tb.sink('m_axis');
  const frame = new Uint8Array(FRAME_OCTETS).map((_, i) => i);
  tb.reset();

  const step = (n: number): void => {
    for (let i = 0; i < n; i++) {
      if (source.pending < FRAMES_AHEAD) source.send(frame);
      tb.cycle();
      if (sink.available > 0) sink.drain();
    }
  };
  step(WARMUP_CYCLES);
  const before = sink.beatCount;
  const start = performance.now();
  step(cycles);
  const seconds = (performance.now() - start) / MS_PER_S;
  const beats = sink.beatCount - before;
  console.log(`${cycles} cycles in ${seconds.toFixed(3)} s: ${(cycles / seconds / 1e6).toFixed(2)} M cycles/s; ${beats} beats (${(beats / cycles).toFixed(3)} per cycle)`);
  tb.close();
}

main();
