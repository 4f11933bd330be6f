/**
 * Mutant schemata for the hand-written RTL mutants of the tests: a test file's mutants of one
 * module are built into ONE Verilator model, each behind `test_mutant == K` (K the mutant's
 * 1-based index in its group, chosen at run time by the plusarg +rnic_test_mutant=K), instead of
 * one build per mutant. A -O0 build of a block costs seconds of CPU; running it costs far less,
 * so a group of mutants shares one build and each test opens it with its own mutant live.
 *
 * The mutants stay what they are today, edits of the module's Verilog text (`(v) => v'`); a
 * mutant whose edit cannot be put behind a selector line by line keeps its own build
 * (sim/harness/open-dut.ts falls back), so grouping never changes what a test checks.
 */

/** A mutant of a group: the edit itself, with where it sits in its group. */
export type GroupedMutant = ((verilog: string) => string) & {
  /** All the edits of the group, in order: the schemata text applies them together. */
  readonly mutantGroup: readonly ((verilog: string) => string)[];
  /** This edit's index in `mutantGroup` (0-based; the Verilog's selector is index + 1). */
  readonly mutantIndex: number;
};

/**
 * The same edits, each tagged with its group and index. A function with extra readonly
 * properties stays assignable to `(v: string) => string`, so harness options need not change:
 * `openDut` sees the tags and builds the group once.
 */
export function mutantGroup<const F extends readonly ((verilog: string) => string)[]>(fns: F): { readonly [I in keyof F]: GroupedMutant } {
  const group = [...fns];
  return fns.map((fn, i) => Object.assign((v: string) => fn(v), { mutantGroup: group, mutantIndex: i })) as unknown as { readonly [I in keyof F]: GroupedMutant };
}

/** The group tags of `mutate`, when it was made by `mutantGroup`. */
export function groupOf(mutate: (verilog: string) => string): { readonly group: readonly ((verilog: string) => string)[]; readonly index: number } | null {
  const g = mutate as Partial<GroupedMutant>;
  return g.mutantGroup && g.mutantIndex !== undefined ? { group: g.mutantGroup, index: g.mutantIndex } : null;
}

/** The plusarg naming the live mutant of a schemata model (0 or absent: none, the original). */
export const TEST_MUTANT_PLUSARG = 'rnic_test_mutant';
export const testMutantPlusarg = (k: number): string => `+${TEST_MUTANT_PLUSARG}=${k}`;

const SELECTOR = 'test_mutant';
const DECLARATION =
  `reg [31:0] ${SELECTOR}; initial if (!$value$plusargs("${TEST_MUTANT_PLUSARG}=%d", ${SELECTOR})) ${SELECTOR} = 32'd0; // mutant schemata (sim/harness/mutant-schemata.ts)`;

export interface Schemata {
  /** The original with every live mutant behind `test_mutant == K` (the original when none is live). */
  readonly text: string;
  /** Per mutant (in the order given), whether it is in `text`: mutant i is live with test_mutant == i + 1. */
  readonly live: readonly boolean[];
}

// One statement on the line, a trailing // comment (dropped in the schemata) allowed.
const CONTINUOUS = /^(\s*)assign\s+([^=;]+?)\s*=(?!=)\s*([^;]+);\s*(?:\/\/.*)?$/;
// LHS: an identifier with optional [..] selects; `=` or `<=`, one statement on the line.
const PROCEDURAL = /^(\s*)([A-Za-z_][\w$]*(?:\s*\[[^\]]*\])*)\s*(<=|=)(?!=)\s*([^;]+);\s*(?:\/\/.*)?$/;

/** A line's statement, as a schemata can select it: null when it is not one it can. */
function statementOf(line: string, previous = ';'): { readonly kind: 'assign' | 'procedural'; readonly lhs: string; readonly op: string; readonly rhs: string; readonly indent: string } | null {
  const c = CONTINUOUS.exec(line);
  if (c) return { kind: 'assign', indent: c[1]!, lhs: c[2]!.trim(), op: '=', rhs: c[3]! };
  const p = PROCEDURAL.exec(line);
  // Not a declaration (`wire x = ...;`), a keyword statement or a case label ("X: y = z;" has a colon before).
  if (p && startsStatement(previous) && balanced(p[4]!) && !/^(?:assign|wire|reg|logic|integer|localparam|parameter|if|else|case|for|while|begin|end)\b/.test(p[2]!.trim())) {
    return { kind: 'procedural', indent: p[1]!, lhs: p[2]!.replace(/\s+/g, ''), op: p[3]!, rhs: p[4]! };
  }
  return null;
}

/** Parentheses and brackets balance in `s`: a line that closes an expression begun above does not. */
function balanced(s: string): boolean {
  let depth = 0;
  for (const ch of s) {
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** The line before ends a statement or a statement's head (`begin`, `if (..)`, a case label): the next line starts one. */
function startsStatement(previous: string): boolean {
  const p = previous.replace(/\/\/.*$/, '').trimEnd();
  return p === '' || /(?:;|\bbegin|\belse|\)|:|\bend\w*)$/.test(p);
}

/**
 * Which lines of `original` a mutant changes (line i of both, same line counts), or null when it
 * adds or removes lines or changes a line a schemata cannot select (multi-line expressions,
 * declarations, case labels, `if` conditions): that mutant keeps its own build.
 */
function changedLines(orig: readonly string[], mutant: string): Map<number, string> | null {
  const lines = mutant.split('\n');
  if (lines.length !== orig.length) return null;
  const changed = new Map<number, string>();
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === orig[i]) continue;
    const a = statementOf(orig[i]!, orig[i - 1]);
    const b = statementOf(lines[i]!, orig[i - 1]);
    if (!a || !b || a.kind !== b.kind || a.lhs !== b.lhs || a.op !== b.op) return null;
    changed.set(i, lines[i]!);
  }
  return changed.size > 0 ? changed : null;
}

/** Line `i` of the original with the mutants that change it (index K, their line) behind the selector. */
function selectLine(original: string, variants: readonly { readonly k: number; readonly line: string }[]): string {
  const o = statementOf(original)!;
  const sel = (k: number) => `${SELECTOR} == 32'd${k}`;
  if (o.kind === 'assign') {
    // One ternary per mutant, chained: the operands keep their context-determined width (the LHS's).
    let rhs = `(${o.rhs})`;
    for (const v of [...variants].reverse()) rhs = `(${sel(v.k)}) ? (${statementOf(v.line)!.rhs}) : ${rhs}`;
    return `${o.indent}assign ${o.lhs} = ${rhs};`;
  }
  // One statement: an if / else-if chain whose last else is the original line (a dangling else
  // after it still binds to the enclosing if, as the original's would).
  const stmt = (line: string) => {
    const s = statementOf(line)!;
    return `${s.lhs} ${s.op} ${s.rhs};`;
  };
  return `${o.indent}${variants.map((v) => `if (${sel(v.k)}) ${stmt(v.line)} else `).join('')}${stmt(original)}`;
}

/**
 * The schemata of `mutants` (each the whole edited text of `original`): a line diff of each
 * against the original; those that change only whole one-line assignments (`assign LHS = RHS;`
 * or a procedural `LHS = RHS;` / `LHS <= RHS;`, the LHS unchanged) go behind `test_mutant == K`
 * (K = index + 1) in one text, line for line, so line numbers in Verilator's messages stay those
 * of the original. `module` names the module whose port list the selector follows (default: the
 * first module of the text).
 */
export function schematize(original: string, mutants: readonly string[], module?: string): Schemata {
  const orig = original.split('\n');
  const perLine = new Map<number, { k: number; line: string }[]>();
  const live = mutants.map((m, i) => {
    const changed = m === original ? null : changedLines(orig, m);
    if (!changed) return false;
    for (const [at, line] of changed) {
      const list = perLine.get(at) ?? [];
      list.push({ k: i + 1, line });
      perLine.set(at, list);
    }
    return true;
  });
  if (perLine.size === 0) return { text: original, live };
  const out = orig.map((l, i) => (perLine.has(i) ? selectLine(l, perLine.get(i)!) : l));
  const start = out.findIndex((l) => (module === undefined ? /^\s*module\s+\w+/ : new RegExp(`^\\s*module\\s+${module}\\b`)).test(l));
  const portsEnd = start < 0 ? -1 : out.findIndex((l, i) => i >= start && /^\s*\)\s*;/.test(l));
  if (portsEnd < 0) return { text: original, live: live.map(() => false) };
  // On the line closing the port list: the lines after it keep their numbers.
  out[portsEnd] = `${out[portsEnd]} ${DECLARATION}`;
  return { text: out.join('\n'), live };
}
