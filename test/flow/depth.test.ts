import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { netlistDepth } from '../../flow/depth';
import { synthesize } from '../../flow/synth';
import { SHARED_DIR } from '../support/vectors';

const FIXTURES = fileURLToPath(new URL('../fixtures/synth/', import.meta.url));
const cacheRoot = mkdtempSync(join(tmpdir(), 'rnic-depth-'));
afterAll(() => rmSync(cacheRoot, { recursive: true, force: true }));

/** ../shared/tools/depth.py on a netlist: the project's reference for the same measure. */
function reference(netlist: string, top: string, exclude = 'cfg_.*'): { lut_levels: number; depth_all: number } {
  const out = execFileSync('python3', [join(SHARED_DIR, 'tools', 'depth.py'), netlist, top, '1', exclude], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!);
}

describe('LUT levels of a mapped netlist (flow/depth.ts)', () => {
  test.each(['xilinx', 'ice40'] as const)('%s: the same LUT levels and all-cell depth as ../shared/tools/depth.py, with the path named', (target) => {
    for (const [top, file] of [['wide_xor_and', 'wide_xor_and.v'], ['counter8', 'counter8.v']] as const) {
      const r = synthesize({ top, sources: [join(FIXTURES, file)], target, cacheRoot });
      const netlist = join(r.logDir, 'netlist.json');
      const ref = reference(netlist, top);
      expect({ top, lut: r.lutLevels, all: r.allCellDepth }).toEqual({ top, lut: ref.lut_levels, all: ref.depth_all });
      expect(r.lutLevels).toBeGreaterThan(0);
      expect(r.criticalPath?.start).toBeTruthy();
      expect(r.criticalPath?.end).toBeTruthy();
      // Excluding every start point leaves no path.
      expect(netlistDepth(readFileSync(netlist, 'utf8'), top, /.*/).lutLevels).toBe(0);
    }
  });
});
