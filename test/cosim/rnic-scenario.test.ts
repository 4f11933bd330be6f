import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseScenario, type ScenarioInput } from '../../ts-model/scenario/schema';
import { cosimScenario } from '../../sim/cosim/rnic-scenario';
import { parseConfig } from '../../hdl-gen/gen/config';
import { runScenario } from '../../ts-model/scenario/run';
import { LlpError } from '../../ts-model/terminate-codes';
import { flipMemWrData, sends } from '../support/scenario-fixtures';

const ROOT = new URL('../../', import.meta.url).pathname;
const load = (f: string) => parseScenario(JSON.parse(readFileSync(join(ROOT, 'examples', f), 'utf8')));
/** Scenarios that act inside the responder or below it: refused, naming what. */
const REFUSED: Record<string, RegExp> = {
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
      // An STag index the configured table does not hold is refused by name before anything runs.
      expect(() => cosimScenario(load('demo.json'), { width: 8, seed: 1, config: parseConfig({ qps: 4, stagDepth: 256 }) })).toThrow(/STag 0x10100 \(index 257\).*stagDepth 256/);
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

describe('rnic cosim --scenario compares every placed octet and refuses what the RTL does not implement', () => {
  test('bit 0 of every mem_wr_data beat flipped is caught on a scenario of Sends, at the write that did it', () => {
    const s = parseScenario(sends());
    expect(cosimScenario(s, { width: 8, seed: 1 }).mismatches).toBe(0);
    // The edited top goes through the same path as a user's --rtl directory (sim/cosim/dut.ts).
    const mutant = cosimScenario(s, { width: 8, seed: 1, mutate: flipMemWrData });
    expect(mutant.mismatches).toBeGreaterThan(0);
    const m = mutant.firstMismatch!;
    expect(m.what).toMatch(/^placement for the initiator's FPDU \d+ at 0x[0-9a-f]+$/);
    expect(m.write).toMatchObject({ cycle: m.cycle });
    expect(m.cycle).toBeGreaterThan(0);
  });

  test('markers in one direction only: the RTL receives with markers and sends without (and the reverse)', () => {
    for (const [initiator, responder] of [[true, false], [false, true]] as const) {
      const raw = JSON.parse(readFileSync(join(ROOT, 'examples', 'rnic-responder.json'), 'utf8')) as ScenarioInput;
      const c = raw.connection!;
      const s = parseScenario({ ...raw, connection: { ...c, initiator: { ...c.initiator, markers: initiator }, responder: { ...c.responder, markers: responder } } });
      // Each side's M bit asks for markers in what it receives (spec/mpa.md §4.2).
      expect(runScenario(s).link.connection.initiatorToResponder.markers).toBe(responder);
      const r = cosimScenario(s, { width: 8, seed: 3 });
      expect(r.firstMismatch, `initiator.markers ${initiator}, responder.markers ${responder}`).toBeNull();
      expect(r.violations).toBe(0);
      expect(r.fpdusOut).toBeGreaterThan(5);
    }
  });

  test('maxUlpduLength reaches the RTL: a longer FPDU fails with LLP error 0x03 there, as in the model', () => {
    const s = parseScenario(sends({ options: { mpa: { maxUlpduLength: 1000 } } }));
    const model = runScenario(s);
    expect(model.events.find((e) => e.type === 'terminate-sent')).toMatchObject({ side: 'responder', layer: LlpError.MARKER.layer, etype: LlpError.MARKER.etype, code: LlpError.MARKER.code });
    const r = cosimScenario(s, { width: 8, seed: 1 });
    expect(r.firstMismatch).toBeNull();
    expect(r.fpdusOut).toBe(1); // the Terminate, as the model's
  });

  test.each([
    [{ mpa: { leadMarkerInCrc: false } }, /options\.mpa\.leadMarkerInCrc false/],
    [{ mpa: { fpduptrRef: 'fpduStart' } }, /options\.mpa\.fpduptrRef "fpduStart"/],
    [{ mpa: { checkMarkers: false } }, /options\.mpa\.checkMarkers false/],
    [{ mpa: { silentDropOnCrcError: true } }, /options\.mpa\.silentDropOnCrcError true/],
    [{ rdmap: { termSegLen: 'payload' } }, /options\.rdmap\.termSegLen "payload": the RTL implements "segment" only/],
    [{ rdmap: { immDataPlacement: 'buffer' } }, /options\.rdmap\.immDataPlacement "buffer"/],
    [{ rdmap: { atomicCredits: 'separate' } }, /options\.rdmap\.atomicCredits "separate"/],
    [{ rdmap: { draft00Swap: true } }, /options\.rdmap\.draft00Swap true/],
  ] as const)('an option the RTL does not implement is refused by name: %j', (options, why) => {
    expect(() => cosimScenario(parseScenario(sends({ options })), { width: 8, seed: 1 })).toThrow(why);
  });
});
