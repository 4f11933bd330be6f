/**
 * Model benchmarks (not tests): `make bench` or `npx tsx bench/run.ts [--json] [--seconds S]`
 * (S: time per figure, split over five interleaved rounds whose medians are reported).
 * Peers run in the same process and the same run, so the ratios hold on any machine; the
 * absolute MB/s move with the machine.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { crc32c as awsCrc32c } from '@aws-crypto/crc32c';
import { crc32c } from '../ts-model/crc32c';
import { IwarpLink } from '../ts-model/link/iwarp-link';
import { MpaDeframer, MpaFramer, mulpdu } from '../ts-model/mpa';
import { Rnic } from '../ts-model/rnic/rnic';
import { cosimCrc32c } from '../sim/cosim/crc32c';
import { measureRxPlacement } from '../sim/cosim/rx';
import { cosimRnic } from '../sim/cosim/rnic';
import { DEFAULT_CONFIG, parseConfig } from '../hdl-gen/gen/config';
import { idleCyclesPerSecond, resetIdle } from '../sim/harness/idle-speed';
import { openTop } from '../sim/cosim/rnic-bench';
import { rnicRateFigures } from '../sim/cosim/rnic-rate';
import { axiRateFigures } from '../sim/cosim/rnic-axi-rate';
import { cosimDdpRxHdr } from '../sim/cosim/ddp-rx-hdr';
import { cosimMpaTx } from '../sim/cosim/mpa-tx';
import { Opcode } from '../ts-model/rdmap/constants';

const GROUPS = ['e2e', 'crc', 'mpa', 'cosim', 'rtl'] as const;
// Bad options are named with what was typed and what is allowed, before anything runs (exit 2).
const refuse = (message: string): never => {
  process.stderr.write(`rnic bench: ${message}\n`);
  process.exit(2);
};
const options = { json: { type: 'boolean' }, seconds: { type: 'string', default: '1.5' }, group: { type: 'string' } } as const;
const parsed = (() => {
  try {
    return parseArgs({ options });
  } catch (e) {
    return refuse(`${(e as Error).message} (it takes --group G, --seconds S, --json)`);
  }
})();
const { values } = parsed;
if (values.group !== undefined && !(GROUPS as readonly string[]).includes(values.group)) refuse(`--group must be one of ${GROUPS.join(', ')}, got '${values.group}'`);
const budget = Number(values.seconds);
if (!(budget > 0)) refuse(`--seconds must be a positive number of seconds, got '${values.seconds}'`);
const fastCrc32c = createRequire(import.meta.url)('fast-crc32c') as { calculate(b: Buffer, init?: number): number; impl?: unknown };

const ROUNDS = 5;
/** Enough calls to get the JIT to its final tier, fewer for big calls. */
const warmup = (bytes: number): number => Math.max(20, Math.min(3000, Math.floor(64e6 / bytes)));

/**
 * MB/s of each contender (each call handles `bytes`), median of ROUNDS time-boxed rounds. The
 * contenders take turns within every round, so a noisy neighbour slows them alike and the
 * ratios stay honest on a shared machine.
 */
function rates(bytes: number, contenders: Record<string, () => unknown>): Record<string, number> {
  const names = Object.keys(contenders);
  for (const name of names) for (let i = 0; i < warmup(bytes); i++) contenders[name]!(); // warm up the JIT
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const slice = (budget * 1000) / ROUNDS / names.length;
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of names) {
      const fn = contenders[name]!;
      let n = 0;
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < slice) {
        for (let k = 0; k < 16; k++) fn();
        n += 16;
        t = performance.now();
      }
      samples[name]!.push((n * bytes) / ((t - t0) / 1000) / 1e6);
    }
  }
  return Object.fromEntries(names.map((n) => [n, samples[n]!.sort((a, b) => a - b)[ROUNDS >> 1]!]));
}

interface Figure {
  figure: string;
  unit: string;
  value: number;
  peer?: string;
  peerValue?: number;
  ratio?: number;
}
const figures: Figure[] = [];

const data = new Uint8Array(65536);
for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;

const want = (g: (typeof GROUPS)[number]) => values.group === g;

// End to end: 4 KiB RDMA Writes through the whole model (segment, frame with markers and CRC,
// deframe, check, place) between two endpoints, at a standard and a jumbo EMSS.
for (const emss of want('e2e') ? [1460, 9000] : []) {
  const rnics = { initiator: new Rnic('initiator'), responder: new Rnic('responder') };
  rnics.responder.stags.register({ stag: 0x100, length: 1n << 20n, base: 0x100000n, access: ['remote-write'] });
  const link = new IwarpLink({
    mpa: { initiatorIsn: 1, responderIsn: 2, initiator: { markers: true, crc: true }, responder: { markers: true, crc: true } },
    emss,
    width: 8,
    rnics,
  });
  link.run(); // MPA start-up and the RTR
  link.events.length = 0;
  const ep = link.endpoint('initiator');
  const payload = data.subarray(0, 4096);
  const BATCH = 64;
  let id = 0;
  const value = rates(4096 * BATCH, {
    writes: () => {
      for (let k = 0; k < BATCH; k++) ep.post({ kind: 'write', id: id++, stag: 0x100, to: BigInt(k * 4096), data: payload });
      link.run();
      if (link.events.length !== BATCH * (2 * Math.ceil(4096 / (mulpdu(emss, true) - 14)) + 1)) throw new Error('unexpected events');
      link.events.length = 0;
      link.segments.length = 0;
    },
  }).writes!;
  figures.push({ figure: `model end to end, 4 KiB RDMA Writes, markers+CRC, EMSS ${emss}`, unit: 'MB/s', value });
}

for (const size of want('crc') ? [4096, 65536] : []) {
  const buf = data.subarray(0, size);
  const nodeBuf = Buffer.from(buf.buffer, buf.byteOffset, size);
  if (crc32c(buf) !== awsCrc32c(buf) || crc32c(buf) !== fastCrc32c.calculate(nodeBuf) >>> 0) throw new Error('CRC peers disagree');
  const r = rates(size, {
    model: () => crc32c(buf),
    aws: () => awsCrc32c(buf),
    fast: () => fastCrc32c.calculate(nodeBuf),
  });
  const [model, aws, fast] = [r.model!, r.aws!, r.fast!];
  figures.push({ figure: `crc32c ${size} B, model vs @aws-crypto/crc32c`, unit: 'MB/s', value: model, peer: '@aws-crypto/crc32c', peerValue: aws, ratio: model / aws });
  figures.push({ figure: `crc32c ${size} B, model vs fast-crc32c (native SSE4.2)`, unit: 'MB/s', value: model, peer: 'fast-crc32c', peerValue: fast, ratio: model / fast });
}

// Frame + deframe 4 KiB ULPDUs with markers and CRC on (EMSS 9000 so 4 KiB fits one FPDU).
if (want('mpa')) {
  const size = 4096;
  if (mulpdu(9000, true) < size) throw new Error('4 KiB does not fit EMSS 9000');
  const ulpdu = data.subarray(0, size);
  const cfg = { s0: 0xfffff000, markers: true, crc: true };
  const tx = new MpaFramer(cfg);
  const rx = new MpaDeframer(cfg);
  const value = rates(size, {
    frameDeframe: () => {
      const ev = rx.push(tx.frame(ulpdu).wire);
      if (ev.length !== 1 || ev[0]!.kind !== 'fpdu') throw new Error('deframe failed');
    },
  }).frameDeframe!;
  figures.push({ figure: 'MPA frame + deframe, 4 KiB ULPDUs, markers and CRC on', unit: 'MB/s', value });
}

// Co-simulation speed: the generated CRC-32C block in Verilator, the scoreboard on, driven by the
// native channels (sim/verilator/channel.ts: source and sink in the addon, the run one native call)
// against the same run driven by the TypeScript AxisSource and RecordSink (one native call and the
// drivers' TypeScript per cycle): the same cycles, so the ratio is the harness's cost alone. Then the
// native run against the block Verilated without the sampled-inputs shim
// (sim/verilator/sampled-inputs.ts), so without the deferred edges it allows: the logic settles
// twice a cycle, not once. Cycles per second of the median of three runs of each, taking turns
// (the build is cached after the first).
const SHIMLESS = 'the same without the sampled-inputs shim (no deferred edges)';
for (const width of want('cosim') ? [8, 64] : []) {
  const frames = Math.max(2000, Math.round(60000 * budget));
  const kinds = { native: { drivers: 'native', sampledInputs: true }, typescript: { drivers: 'typescript', sampledInputs: true }, shimless: { drivers: 'native', sampledInputs: false } } as const;
  const samples: Record<keyof typeof kinds, number[]> = { native: [], typescript: [], shimless: [] };
  for (const seed of [1, 2, 3]) {
    for (const [kind, o] of Object.entries(kinds) as [keyof typeof kinds, (typeof kinds)[keyof typeof kinds]][]) {
      const r = cosimCrc32c({ width, seed, frames, sourcePause: 0, sinkPause: 0, ...o });
      if (r.mismatches) throw new Error('co-simulation mismatch in the benchmark');
      samples[kind].push(r.simCyclesPerSecond);
    }
  }
  const median = (k: keyof typeof kinds): number => samples[k].sort((x, y) => x - y)[1]!;
  const [value, ts, shimless] = [median('native'), median('typescript'), median('shimless')];
  figures.push({ figure: `co-simulation of crc32c_w${width} with native drivers and scoreboard`, unit: 'cycles/s', value, peer: 'the same run with TypeScript drivers', peerValue: ts, ratio: value / ts });
  figures.push({ figure: `co-simulation of crc32c_w${width}, native drivers, against no shim`, unit: 'cycles/s', value, peer: SHIMLESS, peerValue: shimless, ratio: value / shimless });
}

// RTL wire efficiency of mpa_tx in Verilator cycles (exact, machine-independent): 4 KiB ULPDUs,
// markers and CRC on, no back-pressure; the peer figure is the bound the FPDU overhead allows.
for (const width of want('rtl') ? [8, 64] : []) {
  const r = cosimMpaTx({ width, seed: 5, fpdus: 200, ulpduLength: 4096, markers: true, crc: true, sourcePause: 0, sinkPause: 0 });
  if (r.mismatches) throw new Error('mpa_tx mismatch in the benchmark');
  figures.push({ figure: `mpa_tx_w${width} wire efficiency, 4 KiB ULPDUs, markers+CRC (Verilator cycles)`, unit: '% of width', value: 100 * r.efficiency, peer: 'overhead bound', peerValue: 100 * r.bound, ratio: r.efficiency / r.bound });
}

// Receive-path header stage: 4 KiB RDMA Write ULPDUs back to back, no back-pressure; cycles per
// ULPDU against the input beats it takes (the bound at one beat per cycle).
for (const width of want('rtl') ? [8, 64] : []) {
  const length = 4096;
  const r = cosimDdpRxHdr({ width, seed: 5, ulpdus: 100, fixed: { opcode: Opcode.WRITE, length }, sourcePause: 0, sinkPause: 0, descPause: 0 });
  if (r.mismatches) throw new Error('ddp_rx_hdr mismatch in the benchmark');
  const beats = Math.ceil(length / width);
  figures.push({ figure: `ddp_rx_hdr_w${width}, 4 KiB RDMA Writes back to back (Verilator cycles)`, unit: 'cycles/ULPDU', value: r.cyclesPerUlpdu, peer: 'input beats', peerValue: beats, ratio: beats / r.cyclesPerUlpdu });
}

// Receive path placement: 4 KiB RDMA Write ULPDUs (and 4 KiB Write payloads) back to back into one
// region, no back-pressure: payload octets per cycle ÷ width after the first ULPDU (store and
// forward), against the bound the DDP header leaves.
for (const width of want('rtl') ? [8, 64] : []) {
  for (const [ulpdu, what] of [[4096, '4 KiB ULPDUs'], [4096 + 14, '4 KiB payloads']] as const) {
    const r = measureRxPlacement(width, ulpdu, 32);
    figures.push({ figure: `ddp_rx_w${width} placement of RDMA Writes, ${what} (Verilator cycles)`, unit: '% of width', value: 100 * r.efficiency, peer: 'header bound', peerValue: 100 * r.bound, ratio: r.efficiency / r.bound });
  }
}

// The whole datapath, rnic_top_w<W>: transmit (work requests to FPDUs) and receive placement of
// 4 KiB RDMA Writes, exact Verilator cycles (sim/cosim/rnic-rate.ts); the peer is the width.
for (const row of want('rtl') ? rnicRateFigures() : []) {
  figures.push({ figure: `${row.name} (Verilator cycles)`, unit: row.unit, value: row.value, ...(row.unit === 'B/cycle' && { peer: 'datapath width', peerValue: row.width, ratio: row.value / row.width }) });
}

// Issue 19: rnic_top behind its AXI4 master (rnic_top_axi_mem_w64, AXI4 slave memory answering each
// burst 4 or 200 cycles later) against rnic_top_w64 of the same 4-QP configuration, the same harness
// and run (sim/cosim/rnic-axi-rate.ts); the peer is the native top's figure.
for (const row of want('rtl') ? axiRateFigures() : []) {
  figures.push({ figure: `rnic_top_axi_mem_w${row.width} (${row.qps} QPs) ${row.name} (Verilator cycles)`, unit: row.unit, value: row.axi, peer: `rnic_top_w${row.width}, same configuration`, peerValue: row.native, ratio: row.axi / row.native });
}

// Co-simulation speed of the whole datapath: rnic_top_w<W> (the default configuration: 1024 QPs, 64
// with traffic) against the model, the scoreboard on, random workload with faults (cycles per
// second of the whole run, build cached); the peer is the same run without the sampled-inputs shim.
// Then issue 18's figure: the same run at 8 octets with 16 and with 1024 QPs configured, each
// against the bare Verilated top of its configuration ticked idle in the same process (the ceiling
// no harness passes; sim/harness/idle-speed.ts): the ratio is the harness's share of the speed.
const cosimRate = (width: number, sampledInputs: boolean, config?: ReturnType<typeof parseConfig>): number => {
  const ops = Math.max(200, Math.round(400 * budget));
  const r = cosimRnic({ width, seed: 1, ops, faults: 0.05, sampledInputs, ...(config && { config }) });
  if (r.mismatches || r.violations) throw new Error('rnic_top co-simulation mismatch in the benchmark');
  return r.simCyclesPerSecond;
};
for (const width of want('cosim') ? [8, 64] : []) {
  const [value, peerValue] = [cosimRate(width, true), cosimRate(width, false)];
  figures.push({ figure: `co-simulation of rnic_top_w${width} (${DEFAULT_CONFIG.qps} QPs) against the model, scoreboard on`, unit: 'cycles/s', value, peer: SHIMLESS, peerValue, ratio: value / peerValue });
}
for (const qps of want('cosim') ? [16, DEFAULT_CONFIG.qps] : []) {
  const config = parseConfig({ width: 8, qps });
  const value = cosimRate(8, true, config);
  const bare = openTop(8, { config });
  resetIdle(bare);
  const peerValue = idleCyclesPerSecond(bare, Math.max(100_000, Math.round(200_000 * budget)));
  bare.close();
  figures.push({ figure: `co-simulation of rnic_top_w8 (${qps} QPs) against the model, scoreboard on, to the bare top`, unit: 'cycles/s', value, peer: `the bare rnic_top_w8 (${qps} QPs) ticked idle, no harness`, peerValue, ratio: value / peerValue });
}

if (values.group === undefined) {
  // Each group runs in a process of its own: JIT state left by one figure skews the next.
  for (const g of GROUPS) {
    const args = [...process.execArgv, fileURLToPath(import.meta.url), '--group', g, '--json', '--seconds', String(budget)];
    const child = spawnSync(process.execPath, args, { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`bench group ${g} failed:\n${child.stderr}`);
    for (const line of child.stdout.trim().split('\n')) figures.push(JSON.parse(line) as Figure);
  }
}

if (values.json || values.group !== undefined) {
  for (const f of figures) console.log(JSON.stringify(values.group === undefined ? f : roundAll(f)));
} else {
  console.log(`node ${process.version}, ${budget} s per figure\n`);
  for (const f of figures) {
    const peer = f.peer ? `  ${f.peer}: ${f.peerValue!.toFixed(0)} ${f.unit}  ratio ${f.ratio!.toFixed(2)}×` : '';
    console.log(`${f.figure.padEnd(68)} ${f.value.toFixed(0).padStart(8)} ${f.unit}${peer}`);
  }
}

function roundAll(f: Figure): Figure {
  const r = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * 100) / 100);
  return { ...f, value: r(f.value)!, peerValue: r(f.peerValue), ratio: r(f.ratio) };
}
