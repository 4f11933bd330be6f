/**
 * Model benchmarks (not tests): `make bench` or `npx tsx bench/run.ts [--json] [--seconds S]`
 * (S: time per figure, split over five interleaved rounds whose medians are reported).
 * Peers run in the same process and the same run, so the ratios hold on any machine; the
 * absolute MB/s move with the machine.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { crc32c as awsCrc32c } from '@aws-crypto/crc32c';
import { crc32c } from '../ts-model/crc32c';
import { MpaDeframer, MpaFramer, mulpdu } from '../ts-model/mpa';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, seconds: { type: 'string', default: '1.5' } } });
const budget = Number(values.seconds);
const fastCrc32c = createRequire(import.meta.url)('fast-crc32c') as { calculate(b: Buffer, init?: number): number; impl?: unknown };

const ROUNDS = 5;

/**
 * MB/s of each contender (each call handles `bytes`), median of ROUNDS time-boxed rounds. The
 * contenders take turns within every round, so a noisy neighbour slows them alike and the
 * ratios stay honest on a shared machine.
 */
function rates(bytes: number, contenders: Record<string, () => unknown>): Record<string, number> {
  const names = Object.keys(contenders);
  for (const name of names) for (let i = 0; i < 3000; i++) contenders[name]!(); // warm up the JIT
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

for (const size of [4096, 65536]) {
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
{
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

if (values.json) {
  for (const f of figures) console.log(JSON.stringify(roundAll(f)));
} else {
  console.log(`node ${process.version}, ${budget} s per figure\n`);
  for (const f of figures) {
    const peer = f.peer ? `  ${f.peer}: ${f.peerValue!.toFixed(0)} ${f.unit}  ratio ${f.ratio!.toFixed(2)}×` : '';
    console.log(`${f.figure.padEnd(62)} ${f.value.toFixed(0).padStart(6)} ${f.unit}${peer}`);
  }
}

function roundAll(f: Figure): Figure {
  const r = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * 100) / 100);
  return { ...f, value: r(f.value)!, peerValue: r(f.peerValue), ratio: r(f.ratio) };
}
