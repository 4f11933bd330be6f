import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG, type RnicConfig } from '../../hdl-gen/gen/config';
import { REGENERATE, generate, modulesFor } from '../../hdl-gen/gen/generate';
import { REPO_ROOT } from '../../hdl-gen/gen/sources';
import type { Module } from '../../hdl-gen/core/module';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { MUTANT_PLUSARG, MUTATION_KINDS, mutateModule, mutationAt, mutationSites, type Mutation, type MutationKind } from '../../hdl-gen/verify/mutants';
import { parseScenario, type Scenario } from '../../ts-model/scenario/schema';
import { prng } from '../../ts-model/util/prng';
import { cosimCrc32c } from '../cosim/crc32c';
import { cosimRnic } from '../cosim/rnic';
import { cosimScenario } from '../cosim/rnic-scenario';

/**
 * A mutation campaign over the generated RTL (scripts/mutants.ts): for each module, mutants of
 * every kind (hdl-gen/verify/mutants.ts) are built into one Verilator model (mutant schemata) and
 * each is run, live alone, against the workload `make regress` runs: the random co-simulation of
 * the top, then every example scenario, until one reports a difference. A mutant no workload
 * catches is a survivor: yosys then tries to prove it equivalent to the original (equivalence.ts).
 */

/** The regression's random run of the top at 8 octets (scripts/regress.sh, REGRESS_SEED 1). */
export const REGRESS_RANDOM = { width: 8, seed: 1, ops: 10_000, faults: 0.1 } as const;
/** The regression's CRC block run. */
export const REGRESS_CRC = { width: 8, seed: 1, frames: 200_000 } as const;

export interface PlannedModule {
  readonly module: Module;
  readonly mutations: readonly Mutation[];
  /** Sites of each kind in the module (what `per` samples from). */
  readonly sites: Readonly<Record<MutationKind, number>>;
}

/**
 * Up to `per` mutations of each kind per module, drawn from `seed` (and the module's name, so a
 * module's mutants do not change when another module changes).
 */
export function planCampaign(opts: { readonly config?: RnicConfig; readonly seed: number; readonly per: number; readonly only?: string }): PlannedModule[] {
  const modules = modulesFor(opts.config ?? DEFAULT_CONFIG).filter((m) => !opts.only || m.name === opts.only);
  if (opts.only && modules.length === 0) throw new Error(`no module '${opts.only}' in the configuration`);
  return modules.map((module) => {
    const r = prng((opts.seed ^ parseInt(createHash('sha256').update(module.name).digest('hex').slice(0, 8), 16)) >>> 0);
    const all = mutationSites(module);
    const sites = Object.fromEntries(MUTATION_KINDS.map((k) => [k, all.filter((s) => s.kind === k).length])) as Record<MutationKind, number>;
    const mutations: Mutation[] = [];
    for (const kind of MUTATION_KINDS) {
      const pool = all.filter((s) => s.kind === kind);
      for (let i = 0; i < opts.per && pool.length; i++) {
        const site = pool.splice(r.int(0, pool.length - 1), 1)[0]!;
        mutations.push(mutationAt(site, (n) => r.int(0, n - 1)));
      }
    }
    return { module, mutations, sites };
  });
}

/** Every file of the configuration's RTL with `module`'s file replaced, in a content-addressed directory. */
function rtlWith(config: RnicConfig, module: string, verilog: string, label: string): string {
  const files = generate(config).map((f) => (f.path === `${module}.v` ? { ...f, text: verilog } : f));
  const hash = createHash('sha256');
  for (const f of files) hash.update(f.path).update(f.text);
  const dir = join(REPO_ROOT, '.cache', 'mutants', `${module}-${label}-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(dir)) {
    const tmp = `${dir}.tmp-${process.pid}`;
    mkdirSync(tmp, { recursive: true });
    for (const f of files) writeFileSync(join(tmp, f.path), f.text);
    renameSync(tmp, dir);
  }
  return dir;
}

/** The RTL with every mutation of `p` behind `mutant_id == k` (k = 1..n; +MUTANT=k makes k live). */
export function schemataRtl(p: PlannedModule, config: RnicConfig = DEFAULT_CONFIG): string {
  const { module } = mutateModule(p.module, p.mutations, true);
  return rtlWith(config, p.module.name, emitVerilog(module, { regenerate: REGENERATE, plusargs: [{ signal: 'mutant_id', plusarg: MUTANT_PLUSARG }] }), 'schemata');
}

/** The RTL with one mutation applied, as plain Verilog: what `rnic cosim --rtl` replays. */
export function singleMutantRtl(module: Module, mutation: Mutation, config: RnicConfig = DEFAULT_CONFIG): { readonly dir: string; readonly line: string } {
  const original = emitVerilog(module, { regenerate: REGENERATE }).split('\n');
  const text = emitVerilog(mutateModule(module, [mutation], false).module, { regenerate: REGENERATE });
  const changed = text.split('\n').find((l, i) => l !== original[i]) ?? '(no line changed)';
  return { dir: rtlWith(config, module.name, text, 'mutant'), line: changed.trim() };
}

export const mutantPlusarg = (id: number): string => `+${MUTANT_PLUSARG}=${id}`;

/** The example scenarios the RTL can take (the others are refused by name, see rnic-scenario.ts). */
export function exampleScenarios(): { readonly file: string; readonly scenario: Scenario }[] {
  const dir = join(REPO_ROOT, 'examples');
  const files = [...readdirSync(dir).filter((f) => f.endsWith('.json')), ...readdirSync(join(dir, 'faults')).map((f) => `faults/${f}`)].sort();
  return files.map((file) => ({ file, scenario: parseScenario(JSON.parse(readFileSync(join(dir, file), 'utf8'))) }));
}

export interface MutantRun {
  readonly caught: boolean;
  /** The workload that caught it: 'random', 'scenario <file>', 'crc32c'. */
  readonly by: string | null;
  /** The first difference, or the error the run stopped with. */
  readonly how: string;
  readonly cycle: number | null;
}

/**
 * Runs mutant `id` of a schemata RTL against the regression's workloads, in order, until one
 * catches it: a mismatch, a protection violation, or a run that stops (a hang is bounded and
 * reported by the harness).
 */
export function runMutant(module: string, rtlDir: string, id: number, scenarios: readonly { file: string; scenario: Scenario }[]): MutantRun {
  const plusargs = [mutantPlusarg(id)];
  const attempt = (by: string, run: () => { caught: boolean; how: string; cycle: number | null }): MutantRun | null => {
    try {
      const r = run();
      return r.caught ? { caught: true, by, how: r.how, cycle: r.cycle } : null;
    } catch (e) {
      return { caught: true, by, how: `stopped: ${(e as Error).message.split('\n')[0]!.slice(0, 160)}`, cycle: null };
    }
  };
  if (module.startsWith('crc32c_')) {
    const hit = attempt('crc32c', () => {
      const r = cosimCrc32c({ ...REGRESS_CRC, rtlDir, plusargs });
      return { caught: r.mismatches > 0, how: r.firstMismatch ? `frame ${r.firstMismatch.frame}: CRC ${r.firstMismatch.actual}, model ${r.firstMismatch.expected}` : '', cycle: null };
    });
    return hit ?? { caught: false, by: null, how: '', cycle: null };
  }
  const random = attempt('random', () => {
    const r = cosimRnic({ ...REGRESS_RANDOM, rtlDir, plusargs });
    const m = r.firstMismatch;
    return { caught: r.mismatches + r.violations > 0, how: m ? `QP ${m.qp}: ${m.what}` : r.firstViolation ?? '', cycle: m?.cycle ?? null };
  });
  if (random) return random;
  for (const { file, scenario } of scenarios) {
    const hit = attempt(`scenario ${file}`, () => {
      let r;
      try {
        r = cosimScenario(scenario, { width: REGRESS_RANDOM.width, seed: 1, rtlDir, plusargs });
      } catch (e) {
        // A scenario the RTL refuses says nothing about the mutant.
        if (/cannot run on the RTL/.test((e as Error).message)) return { caught: false, how: '', cycle: null };
        throw e;
      }
      const m = r.firstMismatch;
      return { caught: r.mismatches + r.violations > 0, how: m ? m.what : r.firstViolation ?? '', cycle: m?.cycle ?? null };
    });
    if (hit) return hit;
  }
  return { caught: false, by: null, how: '', cycle: null };
}

/** Removes the campaign's cached RTL directories. */
export function clearMutantCache(): void {
  rmSync(join(REPO_ROOT, '.cache', 'mutants'), { recursive: true, force: true });
}
