import { crc32c } from '../../ts-model/crc32c';
import type { Prng } from '../../ts-model/util/prng';
import type { AxisSendBeat } from '../cocotb/axis';
import type { Sampled } from '../cocotb/record-group';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';
import { hex32 } from '../../ts-model/util/hex';

/**
 * Co-simulation of the generated CRC-32C block (crc32c_w<W>) against the model: random frames,
 * random tkeep (any 2^k − 1 on any beat, empty beats, and now and then a non-contiguous one that
 * must be flagged on tuser), random back-pressure on both sides; every CRC compared with the
 * model's. Deterministic from the seed.
 *
 * The source and the CRC sink run in the addon (native channels, sim/verilator/channel.ts), the
 * whole run one native batch that stops in the cycle the last CRC comes out; `drivers:
 * 'typescript'` runs the same cycles with the TypeScript AxisSource and RecordSink (the
 * benchmark's peer).
 */
export interface CrcCosimOptions extends DutSelection {
  readonly width: number;
  /** Verilate the block behind the sampled-inputs shim (default true; the benchmark's baseline turns it off). */
  readonly sampledInputs?: boolean;
  readonly seed: number;
  readonly frames: number;
  /** Probability that the source pauses / the sink is not ready in a cycle. */
  readonly sourcePause?: number;
  readonly sinkPause?: number;
  /** Native channels (default) or the TypeScript drivers, cycle for cycle the same run. */
  readonly drivers?: 'native' | 'typescript';
}

export interface CrcMismatch {
  readonly frame: number;
  /** The cycle the differing CRC (or error flag) came out. */
  readonly cycle: number;
  readonly expected: string;
  readonly actual: string;
  readonly expectedError: boolean;
  readonly actualError: boolean;
  readonly length: number;
  readonly beats: readonly { readonly tkeep: string; readonly data: string }[];
}

export interface CrcCosimResult {
  readonly dut: 'crc32c';
  readonly module: string;
  readonly width: number;
  readonly seed: number;
  readonly frames: number;
  readonly mismatches: number;
  /** Frames with a non-contiguous tkeep (expected flagged on tuser). */
  readonly flaggedFrames: number;
  readonly payloadBytes: number;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
  readonly buildSeconds: number;
  readonly buildCached: boolean;
  readonly rtl: string;
  readonly firstMismatch?: CrcMismatch;
}

interface Frame {
  readonly beats: AxisSendBeat[];
  readonly bytes: Uint8Array;
  readonly badKeep: boolean;
}

function randomFrame(r: Prng, W: number): Frame {
  const full = (1n << BigInt(W)) - 1n;
  const nBeats = r.bool(0.1) ? r.int(20, 60) : r.int(1, 6);
  const beats: AxisSendBeat[] = [];
  const bytes: number[] = [];
  const badKeep = r.bool(0.03);
  const badBeat = r.int(0, nBeats - 1);
  for (let b = 0; b < nBeats; b++) {
    // Mostly full beats; partial ones anywhere (allowed by AXI and by the block), empty ones rarely.
    const k = r.bool(0.6) ? W : r.bool(0.1) ? 0 : r.int(1, W);
    let tkeep = (1n << BigInt(k)) - 1n;
    if (badKeep && b === badBeat) {
      // A hole in tkeep: lane 0 invalid but a higher lane valid.
      tkeep = (BigInt(r.int(1, Math.max(1, Number(full >> 1n)))) << 1n) & full;
      if (tkeep === 0n) tkeep = 2n;
    }
    const data = r.bytes(W);
    beats.push({ data, tkeep, tlast: b === nBeats - 1 });
    for (let i = 0; i < W; i++) if ((tkeep >> BigInt(i)) & 1n) bytes.push(data[i]!);
  }
  return { beats, bytes: Uint8Array.from(bytes), badKeep };
}

/**
 * The fixture of crc32c_w<W>: frames into s_axis; the CRC output is one transfer per frame (no
 * tlast: a record of tdata and tuser), each kept with the cycle it came out.
 */
class CrcBench extends DutBench {
  readonly sAxis: { sendBeats(beats: readonly AxisSendBeat[]): void };
  readonly crcs: { readonly records: readonly CrcOut[] };
  /** The run's end: every frame's CRC out. */
  readonly all: (frames: number) => () => boolean;

  constructor(opts: CrcCosimOptions) {
    super(...DutBench.opening(`crc32c_w${opts.width}`, opts.seed, { ...dutSelection(opts), ...(opts.sampledInputs !== undefined && { sampledInputs: opts.sampledInputs }) }));
    const native = (opts.drivers ?? 'native') === 'native';
    // The pauses are drawn in this order either way, so both kinds of driver see the same seeds.
    const sourcePause = this.pause(opts.sourcePause ?? 0.2);
    const sinkOpts = {
      valid: 'm_axis_tvalid',
      ready: 'm_axis_tready',
      pause: this.pause(opts.sinkPause ?? 0.2),
      map: (f: Sampled, cycle: number): CrcOut => ({ crc: (f.tdata as number) >>> 0, err: f.tuser === 1, cycle }),
    };
    if (native) {
      this.sAxis = this.source('s_axis', { pause: sourcePause, native: true });
      const crcs = this.recordSink('m_axis', { ...sinkOpts, native: true });
      this.crcs = crcs;
      this.all = (n) => crcs.reaches(n);
    } else {
      this.sAxis = this.source('s_axis', { pause: sourcePause });
      const crcs = this.recordSink('m_axis', sinkOpts);
      this.crcs = crcs;
      this.all = (n) => () => crcs.records.length >= n;
    }
  }
}

interface CrcOut {
  readonly crc: number;
  readonly err: boolean;
  readonly cycle: number;
}

export function cosimCrc32c(opts: CrcCosimOptions): CrcCosimResult {
  const W = opts.width;
  const name = `crc32c_w${W}`;
  const tb = new CrcBench(opts);
  const frames = Array.from({ length: opts.frames }, () => randomFrame(tb.r, W));
  for (const f of frames) tb.sAxis.sendBeats(f.beats);
  tb.reset();
  const maxCycles = frames.reduce((a, f) => a + f.beats.length, 0) * 20 + 1000;
  const timer = tb.timer();
  tb.until(tb.all(frames.length), maxCycles, `${frames.length} CRC results from ${name}`);
  const time = timer.stop();
  const results = tb.crcs.records;
  tb.close();

  const mismatches = new Tally<CrcMismatch>(1);
  frames.forEach((f, i) => {
    const got = results[i]!;
    const want = crc32c(f.bytes);
    const ok = got.err === f.badKeep && (f.badKeep || got.crc === want);
    if (ok) return;
    mismatches.add({
      frame: i,
      cycle: got.cycle,
      expected: f.badKeep ? 'tuser = 1 (non-contiguous tkeep)' : hex32(want),
      actual: got.err ? 'tuser = 1' : hex32(got.crc),
      expectedError: f.badKeep,
      actualError: got.err,
      length: f.bytes.length,
      beats: f.beats.map((b) => ({ tkeep: `0x${BigInt(b.tkeep ?? 0n).toString(16)}`, data: Buffer.from(b.data).toString('hex') })),
    });
  });
  const first = mismatches.first;
  return {
    dut: 'crc32c',
    module: name,
    width: W,
    seed: opts.seed,
    frames: frames.length,
    mismatches: mismatches.count,
    flaggedFrames: frames.filter((f) => f.badKeep).length,
    payloadBytes: frames.reduce((a, f) => a + f.bytes.length, 0),
    cycles: time.cycles,
    simCyclesPerSecond: time.simCyclesPerSecond,
    buildSeconds: tb.compiled!.buildMs / 1000,
    buildCached: tb.compiled!.cached,
    rtl: tb.origin,
    ...(first && { firstMismatch: first }),
  };
}
