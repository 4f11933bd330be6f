import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG, type RnicConfig } from '../../hdl-gen/gen/config';
import { REGENERATE, generate, modulesFor } from '../../hdl-gen/gen/generate';
import { cacheDir } from '../../hdl-gen/gen/paths';
import type { Module } from '../../hdl-gen/core/module';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { MUTANT_PLUSARG, MUTATION_KINDS, mutateModule, mutationAt, mutationSites, type Mutation, type MutationKind } from '../../hdl-gen/verify/mutants';
import { withDescendants } from '../../hdl-gen/core/hierarchy';
import { prng } from '../../ts-model/util/prng';
import { regressPlan, type RegressRun } from '../regress/plan';
import { runRegress } from '../regress/run';

/**
 * A mutation campaign over the generated RTL (scripts/mutants.ts): for each module, mutants of
 * every kind (hdl-gen/verify/mutants.ts) are built into one Verilator model (mutant schemata) and
 * each is run, live alone, through the runs of `make regress` that simulate its module (the random
 * co-simulation of the top, the block runs, every example scenario) until one reports a difference.
 * A mutant no run catches is a survivor: yosys then tries to prove it equivalent to the original
 * (equivalence.ts).
 */

/** The regression's seed (REGRESS_SEED's default): the campaign measures what `make regress` catches. */
export const REGRESS_SEED = 1;

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
export function planCampaign(opts: {
  readonly config?: RnicConfig;
  readonly seed: number;
  readonly per: number;
  readonly only?: readonly string[];
}): PlannedModule[] {
  const every = modulesFor(opts.config ?? DEFAULT_CONFIG);
  const unknown = (opts.only ?? []).filter((n) => !every.some((m) => m.name === n));
  if (unknown.length) throw new Error(`no module ${unknown.map((n) => `'${n}'`).join(', ')} in the configuration`);
  const modules = every.filter((m) => !opts.only || opts.only.includes(m.name));
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
  const dir = join(cacheDir('mutants'), `${module}-${label}-${hash.digest('hex').slice(0, 16)}`);
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

/**
 * The regression's runs (sim/regress/plan.ts) that simulate `module` at the configuration's width:
 * the random run of the top first (it stops at the first difference), then the block runs whose
 * DUT contains the module, then the example scenarios.
 */
export function runsFor(module: string, config: RnicConfig = DEFAULT_CONFIG): RegressRun[] {
  const byName = new Map(modulesFor(config).map((m) => [m.name, m]));
  const contains = (top: string) => {
    const t = byName.get(top);
    return !!t && withDescendants(t).some((m) => m.name === module);
  };
  const runs = regressPlan().filter((r) => r.tops.some(contains));
  const rank = (r: RegressRun) => (r.scenario ? 2 : r.args.includes('rnic') ? 0 : 1);
  return runs.sort((a, b) => rank(a) - rank(b));
}

export interface MutantRun {
  readonly caught: boolean;
  /** The run that caught it. */
  readonly by: string | null;
  /** The first difference, or the error the run stopped with. */
  readonly how: string;
  readonly cycle: number | null;
}

/**
 * Runs mutant `id` of a schemata RTL through `runs` until one fails: a difference, a protection
 * violation, or a run that stops (a hang is bounded and reported by the harness). Mutant 0 is the
 * original: the campaign runs it first, so whatever fails for a mutant is the mutant's doing.
 */
export function runMutant(rtlDir: string, id: number, runs: readonly RegressRun[]): MutantRun {
  for (const run of runs) {
    const r = runRegress(run, REGRESS_SEED, { rtl: rtlDir, plusargs: [mutantPlusarg(id)], evidence: false });
    if (r.status === 'fail') return { caught: true, by: run.name, how: r.detail, cycle: r.cycle };
  }
  return { caught: false, by: null, how: '', cycle: null };
}

/** Removes the campaign's cached RTL directories. */
export function clearMutantCache(): void {
  rmSync(cacheDir('mutants'), { recursive: true, force: true });
}
