import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { proveEquivalent } from '../../sim/mutation/equivalence';

/**
 * The mutation campaign's equivalence verdicts on three small designs: the original, a mutant
 * that changes a register only while no output reads it, and one that changes an output.
 */
const ORIGINAL = `module t (input wire clk, input wire en, input wire [3:0] d, output wire [3:0] q);
  reg [3:0] r; reg [3:0] s; reg v;
  always @(posedge clk) begin v <= en; r <= d; s <= v ? r : s; end
  assign q = s;
endmodule
`;
const dirs: string[] = [];
function rtl(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rnic-equiv-test-'));
  dirs.push(dir);
  writeFileSync(join(dir, 't.v'), text);
  writeFileSync(join(dir, 'rnic.f'), 't.v\n');
  const ports = [['clk', 'input'], ['en', 'input'], ['d', 'input'], ['q', 'output']].map(([name, direction]) => ({ name, direction }));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ modules: [{ name: 't', ports }] }));
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('proveEquivalent', () => {
  const gold = rtl(ORIGINAL);

  test('a copy is equivalent, every register paired', () => {
    const v = proveEquivalent(gold, rtl(ORIGINAL), 't');
    expect(v.status).toBe('equivalent');
    expect(v.detail).not.toMatch(/unpaired/);
  });

  test('a register changed only while no output reads it: equivalent at the outputs, the register named', () => {
    // r is read only in the cycle after en; when en is low its value is never seen.
    const v = proveEquivalent(gold, rtl(ORIGINAL.replace('r <= d;', "r <= en ? d : 4'h8;")), 't');
    expect(v).toMatchObject({ status: 'equivalent' });
    expect(v.detail).toMatch(/at the outputs.*unpaired \(r\)/);
  });

  test('a change an output shows is not proved', () => {
    const v = proveEquivalent(gold, rtl(ORIGINAL.replace('s <= v ? r : s;', "s <= v ? r : 4'h1;")), 't');
    expect(v.status).toBe('not-proved');
  });
});
