import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseScenario } from '../../ts-model/scenario/schema';
import { cosimScenario } from '../../sim/cosim/rnic-scenario';

const ROOT = new URL('../../', import.meta.url).pathname;
const load = (f: string) => parseScenario(JSON.parse(readFileSync(join(ROOT, 'examples', f), 'utf8')));
/** Scenarios that act inside the responder or below it: refused, naming what. */
const REFUSED: Record<string, RegExp> = {
  'demo.json': /STag 0x10100 has index 257.*stagDepth/,
  'faults/no-receive-buffer.json': /'no-receive-buffer'/,
  'faults/rnic-failure.json': /'rnic-failure'/,
  'faults/connection-lost.json': /'connection-lost'/,
};
const files = ['rnic-responder.json', 'ird-ord.json', 'rev1-crc-off.json', ...readdirSync(join(ROOT, 'examples', 'faults')).map((f) => `faults/${f}`)];

describe('rnic cosim --scenario: the RTL as the responder of the example scenarios', () => {
  test(
    'every example the RTL can take agrees with the model FPDU by FPDU; the others are refused by name',
    () => {
      let ran = 0;
      for (const f of [...files, 'demo.json']) {
        const s = load(f);
        if (REFUSED[f]) {
          expect(() => cosimScenario(s, { width: 8, seed: 1 }), f).toThrow(REFUSED[f]);
          continue;
        }
        const r = cosimScenario(s, { width: 8, seed: 1 });
        expect(r.firstMismatch, f).toBeNull();
        expect(r.mismatches, f).toBe(0);
        expect(r.violations, f).toBe(0);
        ran++;
      }
      expect(ran).toBeGreaterThan(15);
      // Both directions and the responder's own work requests.
      const r = cosimScenario(load('rnic-responder.json'), { width: 8, seed: 2 });
      expect(r.workRequests).toBe(2);
      expect(r.fpdusOut).toBeGreaterThan(5);
      expect(r.fpdusIn).toBeGreaterThan(10);
    },
  );

  test('from the CLI: PASS and exit 0; a refused scenario exits 2 naming the field', () => {
    const ok = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--scenario', 'examples/rnic-responder.json', '--json'], { cwd: ROOT, encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ mismatches: 0, violations: 0, workRequests: 2 });
    const bad = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--scenario', 'examples/faults/rnic-failure.json'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/faults\[\]\.kind 'rnic-failure'/);
  });
});
