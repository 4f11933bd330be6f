import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Is a surviving mutant equivalent to the original? yosys proves it or not: both designs are read
 * and flattened under `top`, `equiv_make` pairs their signals by name (a mutant differs from the
 * original in one expression, so every register and output has a partner), `equiv_simple` proves
 * pairs from their input cones over up to SEQ cycles, and, when some pair is left, `equiv_induct`
 * (temporal induction over the register state) tries again.
 *
 * A mutant often changes a register that no output reads while it differs (a field the next
 * message overwrites first): that pair can never be proved, and it blocks the proof of the outputs
 * whose cones assume it equal. So the unproved internal signals are then left unpaired
 * (`equiv_make -blacklist`) and the proof runs again: an unpaired register is a free variable in
 * each design at the edge of the SEQ-cycle window, independently in gold and gate, which only
 * weakens what the proof may assume, so a proof that still succeeds is sound. The verdict is then
 * "equivalent at the outputs", with the unpaired signals named. An output pair that stays
 * unproved is not proved, whatever else holds.
 */
export type EquivalenceVerdict =
  | { readonly status: 'equivalent'; readonly detail: string }
  | { readonly status: 'not-proved'; readonly detail: string };

/** Cycles equiv_simple looks back through. */
const SEQ = 8;
/** Cycles of the induction step: what equiv_simple leaves over is usually one register loop. */
const INDUCT_SEQ = 2;
/** Rounds of unpairing unproved internal signals before giving up. */
const UNPAIR_ROUNDS = 3;

const files = (dir: string): string[] =>
  readFileSync(join(dir, 'rnic.f'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((f) => join(dir, f));

/** The top's output ports, from the manifest beside the RTL. */
function outputsOf(dir: string, top: string): Set<string> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { modules: { name: string; ports: { name: string; direction: string }[] }[] };
  const m = manifest.modules.find((x) => x.name === top);
  if (!m) throw new Error(`${top} is not a module of ${join(dir, 'manifest.json')}`);
  return new Set(m.ports.filter((p) => p.direction === 'output').map((p) => p.name));
}

interface Attempt {
  readonly ok: boolean;
  readonly summary: string;
  /** The gold names of the signals left unproved (bit indices dropped). */
  readonly unproved: readonly string[];
}

export function proveEquivalent(goldDir: string, gateDir: string, top: string, inductionTimeoutMs = 10 * 60_000): EquivalenceVerdict {
  const work = mkdtempSync(join(tmpdir(), 'rnic-equiv-'));
  const outputs = outputsOf(goldDir, top);
  try {
    const side = (dir: string, name: string) => [
      `read_verilog -sv ${files(dir).join(' ')}`,
      `hierarchy -check -top ${top}`,
      'proc; flatten; opt_clean; memory -nomap; opt_clean',
      `rename ${top} ${name}`,
      `design -stash ${name}`,
    ];
    const prove = (steps: readonly string[], unpaired: readonly string[], timeout?: number): Attempt => {
      writeFileSync(join(work, 'unpaired.txt'), unpaired.map((n) => `${n}\n`).join(''));
      const script = [
        ...side(goldDir, 'gold'),
        ...side(gateDir, 'gate'),
        'design -copy-from gold -as gold gold',
        'design -copy-from gate -as gate gate',
        `equiv_make -blacklist ${join(work, 'unpaired.txt')} gold gate equiv`,
        'hierarchy -top equiv',
        'equiv_struct',
        ...steps,
        'equiv_status -assert',
      ].join('\n');
      writeFileSync(join(work, 'equiv.ys'), script);
      const r = spawnSync('yosys', ['-q', '-l', join(work, 'equiv.log'), join(work, 'equiv.ys')], { encoding: 'utf8', stdio: 'ignore', ...(timeout && { timeout }) });
      let log = '';
      try {
        log = readFileSync(join(work, 'equiv.log'), 'utf8');
      } catch {
        // No log: yosys did not start.
      }
      const counts = /Found (\d+) \$equiv cells in equiv:[\s\S]*?Of those cells (\d+) are proven and (\d+) are unproven/.exec(log);
      const summary = counts ? `${counts[2]} of ${counts[1]} signal pairs proved equal` : r.signal ? `stopped after ${Math.round((timeout ?? 0) / 60_000)} min` : 'no verdict';
      // "Unproven $equiv <cell>: \\name_gold [bit] \\name_gate [bit]"
      const unproved = [...new Set([...log.matchAll(/^\s*Unproven \$equiv \S+: \\(\S+)_gold\b/gm)].map((m) => m[1]!))];
      return { ok: r.status === 0, summary, unproved };
    };
    const unpaired: string[] = [];
    const details: string[] = [];
    for (let round = 0; round <= UNPAIR_ROUNDS; round++) {
      const also = unpaired.length ? ` with ${unpaired.length} internal signals unpaired (${unpaired.join(', ')})` : '';
      const simple = prove([`equiv_simple -seq ${SEQ}`], unpaired);
      if (simple.ok) return { status: 'equivalent', detail: `${also ? 'at the outputs, ' : ''}yosys equiv_simple: ${simple.summary}${also}` };
      const induct = prove([`equiv_simple -seq ${SEQ}`, `equiv_induct -seq ${INDUCT_SEQ}`], unpaired, inductionTimeoutMs);
      if (induct.ok) return { status: 'equivalent', detail: `${also ? 'at the outputs, ' : ''}yosys equiv_induct: ${induct.summary}${also}` };
      details.push(`${simple.summary}; with induction: ${induct.summary}${also}`);
      const internal = induct.unproved.filter((n) => !outputs.has(n) && !unpaired.includes(n));
      if (induct.unproved.some((n) => outputs.has(n)) || internal.length === 0) break;
      unpaired.push(...internal);
    }
    return { status: 'not-proved', detail: `yosys: ${details.join(' / ')}` };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
