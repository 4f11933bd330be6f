import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { netlistDepth, readModule } from '../../flow/depth';
import { synthesize } from '../../flow/synth';
import { abc9Delay, xilinxArcs } from '../../flow/abc9-delay';
import { xilinxCellLibrary } from '../../flow/xilinx-bram';
import { YOSYS } from '../../flow/yosys';
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
      expect(netlistDepth(readModule(readFileSync(netlist, 'utf8'), top), /.*/).lutLevels).toBe(0);
    }
  });
});

describe("abc9's delay model (flow/abc9-delay.ts)", () => {
  test("yosys's arcs: a LUT6's fast pin I5 and slow pin I0, the carry cell's arcs", () => {
    const arcs = xilinxArcs(xilinxCellLibrary(YOSYS));
    expect(arcs.get('LUT6')?.get('I5>O')).toBe(127);
    expect(arcs.get('LUT6')?.get('I0>O')).toBe(642);
    expect(arcs.get('LUT2')?.get('I1>O')).toBe(127);
    expect(arcs.get('CARRY4')?.get('CI>CO[3]')).toBeGreaterThan(0);
    expect(arcs.get('MUXF7')?.size).toBeGreaterThan(0);
  });

  test("xilinx: abc9's target from the log, and the slowest path in its model within 15% of it, named", () => {
    for (const [top, file] of [['wide_xor_and', 'wide_xor_and.v'], ['counter8', 'counter8.v']] as const) {
      const r = synthesize({ top, sources: [join(FIXTURES, file)], target: 'xilinx', cacheRoot });
      const target = r.abc9?.targetPs ?? 0;
      const slowest = r.abc9?.slowest;
      expect(target, top).toBeGreaterThan(0);
      expect(slowest?.start, top).toBeTruthy();
      expect(slowest?.end, top).toBeTruthy();
      expect(Math.abs(slowest!.ps - target) / target, `${top}: ${slowest!.ps} ps against abc9's ${target}`).toBeLessThan(0.15);
      // Its start left out (as configuration inputs are), the slowest path is another, no slower.
      const escaped = slowest!.start.replace(/[[\]]/g, '\\$&');
      const other = abc9Delay(readModule(readFileSync(join(r.logDir, 'netlist.json'), 'utf8'), top), xilinxArcs(xilinxCellLibrary(YOSYS)), new RegExp(`^${escaped}$`));
      expect(other?.start ?? null, top).not.toBe(slowest!.start);
      expect(other?.ps ?? 0, top).toBeLessThanOrEqual(slowest!.ps);
    }
  });
});
