import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Is a surviving mutant equivalent to the original? yosys proves it or not: both designs are read
 * and flattened under `top`, `equiv_make` pairs their signals by name (a mutant differs from the
 * original in one expression, so every register and output has a partner), `equiv_simple` proves
 * pairs from their input cones over up to SEQ cycles, and, when some pair is left, `equiv_induct`
 * (temporal induction over the register state) tries again. `equiv_status -assert` passes only
 * when every pair is proved equal, outputs and registers alike: a mutant whose change reaches only
 * state that no output reads still counts as not proved, and a reviewer looks at it.
 */
export type EquivalenceVerdict =
  | { readonly status: 'equivalent'; readonly detail: string }
  | { readonly status: 'not-proved'; readonly detail: string };

/** Cycles equiv_simple looks back through. */
const SEQ = 8;
/** Cycles of the induction step: what equiv_simple leaves over is usually one register loop. */
const INDUCT_SEQ = 2;

const files = (dir: string): string[] =>
  readFileSync(join(dir, 'rnic.f'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((f) => join(dir, f));

export function proveEquivalent(goldDir: string, gateDir: string, top: string, inductionTimeoutMs = 10 * 60_000): EquivalenceVerdict {
  const work = mkdtempSync(join(tmpdir(), 'rnic-equiv-'));
  try {
    const side = (dir: string, name: string) => [
      `read_verilog -sv ${files(dir).join(' ')}`,
      `hierarchy -check -top ${top}`,
      'proc; flatten; opt_clean; memory -nomap; opt_clean',
      `rename ${top} ${name}`,
      `design -stash ${name}`,
    ];
    const prove = (steps: readonly string[], timeout?: number) => {
      const script = [
        ...side(goldDir, 'gold'),
        ...side(gateDir, 'gate'),
        'design -copy-from gold -as gold gold',
        'design -copy-from gate -as gate gate',
        'equiv_make gold gate equiv',
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
      return { ok: r.status === 0, summary };
    };
    const simple = prove([`equiv_simple -seq ${SEQ}`]);
    if (simple.ok) return { status: 'equivalent', detail: `yosys equiv_simple: ${simple.summary}` };
    const induct = prove([`equiv_simple -seq ${SEQ}`, `equiv_induct -seq ${INDUCT_SEQ}`], inductionTimeoutMs);
    if (induct.ok) return { status: 'equivalent', detail: `yosys equiv_induct: ${induct.summary}` };
    return { status: 'not-proved', detail: `yosys: ${simple.summary}; with induction: ${induct.summary}` };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
