/**
 * The mutation campaign (sim/mutation/campaign.ts): does the regression catch a broken RTL? For
 * every module of rtl/rnic.f, up to --per mutants of each kind (a constant bit flipped, an
 * operator swapped, a term dropped, a datapath bit stuck at 0 or 1, a condition inverted) are
 * built into one Verilator model per module and run one at a time against what `make regress`
 * runs at 8 octets: the random co-simulation of the top (REGRESS_SEED 1, 10 000 operations, 10%
 * faults), then every example scenario. A survivor goes to yosys for an equivalence proof, and its
 * single-mutant RTL is kept for a replay with `rnic cosim --rtl`.
 *
 *   npx tsx scripts/mutants.ts [--seed N] [--per N] [--module M[,M…]] [--no-prove] [--out DIR]
 *   npx tsx scripts/mutants.ts --reprove [--out DIR]
 *
 * --reprove runs only the equivalence proofs again, for the survivors in DIR/results.json not
 * proved yet (each from its kept single-mutant RTL), and rewrites the two files.
 *
 * Writes DIR/results.json and DIR/mutation.md (the table in docs/testing.md); default out/mutants.
 * A long job (about an hour): one model build per module, seconds to a minute per mutant.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG } from '../hdl-gen/gen/config';
import { PACKAGE_ROOT } from '../hdl-gen/gen/paths';
import { MUTATION_KINDS } from '../hdl-gen/verify/mutants';
import { REGRESS_SEED, planCampaign, runMutant, runsFor, schemataRtl, singleMutantRtl } from '../sim/mutation/campaign';
import { proveEquivalent } from '../sim/mutation/equivalence';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    per: { type: 'string', default: '3' },
    module: { type: 'string' },
    'no-prove': { type: 'boolean' },
    reprove: { type: 'boolean' },
    out: { type: 'string', default: 'out/mutants' },
  },
});
const seed = Number(values.seed);
const per = Number(values.per);
const out = values.out!;
mkdirSync(out, { recursive: true });

interface Row {
  readonly module: string;
  readonly id: number;
  readonly kind: string;
  readonly what: string;
  readonly line: string;
  readonly caught: boolean;
  readonly by: string | null;
  readonly how: string;
  readonly cycle: number | null;
  readonly seconds: number;
  readonly equivalence?: { status: string; detail: string };
  readonly replay?: string;
}

if (values.reprove) reprove();
else campaign();

function campaign(): void {
  const plan = planCampaign({ seed, per, ...(values.module && { only: values.module.split(',') }) });
  const rows: Row[] = [];
  const t0 = performance.now();
  for (const p of plan) {
    const name = p.module.name;
    const tb = performance.now();
    const dir = schemataRtl(p);
    const runs = runsFor(name);
    // The schemata model with no mutant live must pass everything: then whatever a mutant makes
    // happen, an error of the harness included, is the mutant's doing.
    const baseline = runMutant(dir, 0, runs);
    if (baseline.caught) throw new Error(`${name}: the workload fails with no mutant live (${baseline.by}: ${baseline.how}); fix that first`);
    console.log(`${name}: ${p.mutations.length} mutants of ${Object.values(p.sites).reduce((a, b) => a + b, 0)} sites (${MUTATION_KINDS.map((k) => `${k} ${p.sites[k]}`).join(', ')}); RTL in ${dir}`);
    p.mutations.forEach((mutation, i) => {
      const id = i + 1;
      const t = performance.now();
      const run = runMutant(dir, id, runs);
      const seconds = Math.round((performance.now() - t) / 1000);
      let row: Row = { module: name, id, kind: mutation.kind, what: mutation.what, line: '', caught: run.caught, by: run.by, how: run.how, cycle: run.cycle, seconds };
      if (!run.caught) {
        const single = singleMutantRtl(p.module, mutation);
        const replay = `npx rnic cosim ${runs[0]!.args.join(' ')} --seed ${REGRESS_SEED} --rtl ${single.dir}`;
        row = { ...row, line: single.line, replay, ...(!values['no-prove'] && { equivalence: proveEquivalent(join(PACKAGE_ROOT, 'rtl'), single.dir, name) }) };
      }
      rows.push(row);
      console.log(`  ${run.caught ? 'CAUGHT' : 'SURVIVED'} #${id} ${mutation.kind}: ${mutation.what} (${seconds} s)${run.caught ? ` by ${run.by}: ${run.how}${run.cycle !== null ? ` at cycle ${run.cycle}` : ''}` : ` ${row.equivalence ? `${row.equivalence.status}: ${row.equivalence.detail}` : ''}`}`);
    });
    console.log(`  ${name}: ${rows.filter((r) => r.module === name && r.caught).length} of ${p.mutations.length} caught (${Math.round((performance.now() - tb) / 1000)} s)`);
  }
  write({ seed, per, config: DEFAULT_CONFIG, regressSeed: REGRESS_SEED, seconds: Math.round((performance.now() - t0) / 1000), rows });
}

/** The survivors of an earlier campaign not proved equivalent, proved again. */
function reprove(): void {
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Results;
  const rows = results.rows.map((r) => {
    if (r.caught || r.equivalence?.status === 'equivalent') return r;
    const rtl = / --rtl (\S+)/.exec(r.replay ?? '')?.[1];
    if (!rtl) throw new Error(`${out}/results.json: survivor ${r.module} #${r.id} has no single-mutant RTL in its replay line`);
    const equivalence = proveEquivalent(join(PACKAGE_ROOT, 'rtl'), rtl, r.module);
    console.log(`  ${r.module} #${r.id} ${r.what}: ${equivalence.status}: ${equivalence.detail}`);
    return { ...r, equivalence };
  });
  write({ ...results, rows });
}

interface Results {
  readonly seed: number;
  readonly per: number;
  readonly config: typeof DEFAULT_CONFIG;
  readonly regressSeed: number;
  readonly seconds: number;
  readonly rows: readonly Row[];
}

function write(results: Results): void {
  const { rows } = results;
  writeFileSync(join(out, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(join(out, 'mutation.md'), markdown(rows));
  const caught = rows.filter((r) => r.caught).length;
  const equivalent = rows.filter((r) => r.equivalence?.status === 'equivalent').length;
  console.log(`${caught} of ${rows.length} mutants caught, ${equivalent} survivors proved equivalent, ${rows.length - caught - equivalent} not (seed ${results.seed}, ${results.seconds} s); ${join(out, 'mutation.md')}`);
  process.exitCode = caught + equivalent === rows.length ? 0 : 1;
}

/** The table of docs/testing.md: per module, tried and caught; then every survivor with its reason. */
function markdown(all: readonly Row[]): string {
  const modules = [...new Set(all.map((r) => r.module))];
  const lines = ['| module | mutants | caught | by a random run | by a scenario | survivors proved equivalent | survivors not proved |', '|---|---|---|---|---|---|---|'];
  for (const m of modules) {
    const rs = all.filter((r) => r.module === m);
    const c = rs.filter((r) => r.caught);
    lines.push(`| \`${m}\` | ${rs.length} | ${c.length} | ${c.filter((r) => !r.by?.startsWith('scenario')).length} | ${c.filter((r) => r.by?.startsWith('scenario')).length} | ${rs.filter((r) => r.equivalence?.status === 'equivalent').length} | ${rs.filter((r) => !r.caught && r.equivalence?.status !== 'equivalent').length} |`);
  }
  const survivors = all.filter((r) => !r.caught);
  if (survivors.length) {
    lines.push('', '| survivor | mutation | changed line | reason |', '|---|---|---|---|');
    for (const r of survivors) lines.push(`| \`${r.module}\` #${r.id} | ${r.what.replaceAll('|', '\\|')} | \`${r.line.slice(0, 90).replaceAll('|', '\\|')}\` | ${r.equivalence ? `${r.equivalence.status}: ${r.equivalence.detail}` : 'not examined'} |`);
  }
  return lines.join('\n') + '\n';
}
