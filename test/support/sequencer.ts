import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the slowest test files first (longest processing time first, the classic schedule for
 * jobs on a few workers): with two workers and files from under a second to over two minutes, a
 * slow file that starts last runs alone at the end. vitest orders by its own cache of durations
 * when it has one; a fresh clone (CI) has none and vitest falls back to file size, which put the
 * shared mpa_rx file last and alone for two minutes. test/durations.json holds the seconds of a
 * full run (refresh with `node scripts/test-durations.mjs` after `make test`); files it does not
 * name keep vitest's order, after those it does.
 */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = JSON.parse(readFileSync(join(root, 'test', 'durations.json'), 'utf8')) as Record<string, number>;
    const cost = (f: TestSpecification): number => seconds[relative(root, f.moduleId)] ?? -1;
    const at = new Map(base.map((f, i) => [f, i]));
    return [...base].sort((a, b) => cost(b) - cost(a) || at.get(a)! - at.get(b)!);
  }
}
