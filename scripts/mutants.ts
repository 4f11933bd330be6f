/**
 * Single-bit mutants of the generated RTL, each passed through `--rtl` to the co-simulation: does
 * the scoreboard catch a flipped bit in every block? For each module of rtl/rnic.f, `--per N`
 * constants in its logic (a sized literal in an `assign` or a register update) are picked from the
 * seed, one bit of each is flipped, and the whole RNIC (or, for a block the top does not
 * instantiate, its own co-simulation) runs on the copy. A mutant is caught when the run reports a
 * mismatch or a violation, or stops with an error (a hang is reported as one).
 *
 *   npx tsx scripts/mutants.ts [--seed N] [--per N] [--ops N] [--module M] [--json]
 *
 * Minutes per mutant (each is a Verilator build of the top): a long job, outside `make test`.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cosimCrc32c } from '../sim/cosim/crc32c';
import { cosimRnic } from '../sim/cosim/rnic';
import { prng } from '../ts-model/util/prng';

const { values } = parseArgs({
  options: { seed: { type: 'string', default: '1' }, per: { type: 'string', default: '1' }, ops: { type: 'string', default: '400' }, module: { type: 'string' }, json: { type: 'boolean' } },
});
const ROOT = new URL('..', import.meta.url).pathname;
const RTL = join(ROOT, 'rtl');
const r = prng(Number(values.seed));
const modules = readFileSync(join(RTL, 'rnic.f'), 'utf8').split('\n').filter(Boolean).map((f) => f.replace(/\.v$/, ''));

interface Site {
  readonly line: number;
  readonly at: number;
  readonly width: number;
  readonly value: bigint;
  readonly text: string;
}

/** Sized hex literals in logic lines (not declarations, not parameters). */
function sites(v: string): Site[] {
  const out: Site[] = [];
  v.split('\n').forEach((l, i) => {
    if (!/^\s*(assign\b|\w+(\[[^\]]*\])?\s*(<=|=)\s)/.test(l) || /^\s*(localparam|parameter|input|output|wire|reg)\b/.test(l)) return;
    for (const m of l.matchAll(/(\d+)'h([0-9a-f]+)/g)) out.push({ line: i, at: m.index!, width: Number(m[1]), value: BigInt(`0x${m[2]}`), text: m[0] });
  });
  return out;
}

const rows: { module: string; site: string; caught: boolean; how: string; seconds: number }[] = [];
for (const mod of modules) {
  if (values.module && mod !== values.module) continue;
  const file = `${mod}.v`;
  const v = readFileSync(join(RTL, file), 'utf8');
  const all = sites(v);
  for (let k = 0; k < Number(values.per) && all.length; k++) {
    const s = all[r.int(0, all.length - 1)]!;
    const bit = BigInt(r.int(0, s.width - 1));
    const flipped = `${s.width}'h${(s.value ^ (1n << bit)).toString(16)}`;
    const lines = v.split('\n');
    lines[s.line] = lines[s.line]!.slice(0, s.at) + flipped + lines[s.line]!.slice(s.at + s.text.length);
    const dir = mkdtempSync(join(tmpdir(), 'rnic-mutant-'));
    cpSync(RTL, dir, { recursive: true });
    writeFileSync(join(dir, file), lines.join('\n'));
    const t0 = performance.now();
    let caught = false;
    let how = '';
    try {
      if (mod.startsWith('crc32c_')) {
        const res = cosimCrc32c({ width: Number(mod.split('_w')[1]), seed: 1, frames: 2000, rtlDir: dir });
        caught = res.mismatches > 0;
        how = caught ? 'CRC mismatch' : '';
      } else {
        const res = cosimRnic({ width: 8, seed: Number(values.seed), ops: Number(values.ops), faults: 0.1, rtlDir: dir });
        caught = res.mismatches + res.violations > 0;
        how = res.firstMismatch ? `${res.firstMismatch.what}` : res.firstViolation ?? '';
      }
    } catch (e) {
      caught = true;
      how = `stopped: ${(e as Error).message.split('\n')[0]!.slice(0, 120)}`;
    }
    rmSync(dir, { recursive: true, force: true });
    const row = { module: mod, site: `line ${s.line + 1}: ${s.text} → ${flipped}`, caught, how, seconds: Math.round((performance.now() - t0) / 1000) };
    rows.push(row);
    if (!values.json) console.log(`${caught ? 'CAUGHT' : 'MISSED'}  ${mod}  ${row.site}  (${row.seconds} s)  ${how}`);
  }
}
if (values.json) console.log(JSON.stringify(rows));
else console.log(`${rows.filter((x) => x.caught).length} of ${rows.length} single-bit mutants caught (seed ${values.seed})`);
process.exitCode = rows.every((x) => x.caught) ? 0 : 1;
