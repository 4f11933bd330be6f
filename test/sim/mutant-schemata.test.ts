import { describe, expect, test } from 'vitest';
import { cosimAtomicUnit } from '../../sim/cosim/atomic-unit';
import { groupOf, mutantGroup, schematize } from '../../sim/harness/mutant-schemata';

const MODULE = `module m (
    input  wire       clk,
    input  wire [3:0] a,
    output wire [3:0] y,
    output reg  [3:0] q
);
wire [3:0] t = a + 4'd1;
assign y = a & 4'h3; // the low half
reg [3:0] q_next;
always @* begin
    q_next = q;
    case (a)
        4'd1: q_next = 4'd7;
        default: q_next = a;
    endcase
end
always @(posedge clk) begin
    q <= q_next;
end
endmodule
`;
const DECL = `); reg [31:0] test_mutant; initial if (!$value$plusargs("rnic_test_mutant=%d", test_mutant)) test_mutant = 32'd0;`;

/** The lines of `schemata` that differ from MODULE's. */
const changed = (schemata: string) => {
  const a = MODULE.split('\n');
  return schemata.split('\n').flatMap((l, i) => (l === a[i] ? [] : [l.replace(/ \/\/ mutant schemata.*$/, '')]));
};

describe('schematize: mutants of one text behind test_mutant == K, line for line', () => {
  test('a continuous assign: a ternary on the selector, the original last; the selector declared after the port list', () => {
    const s = schematize(MODULE, [MODULE.replace('assign y = a & 4\'h3;', 'assign y = a | 4\'h3;')]);
    expect(s.live).toEqual([true]);
    expect(changed(s.text)).toEqual([DECL, "assign y = (test_mutant == 32'd1) ? (a | 4'h3) : (a & 4'h3);"]);
    expect(s.text.split('\n').length).toBe(MODULE.split('\n').length);
  });

  test('procedural assignments, blocking and not: an if on the selector, else the original line', () => {
    const s = schematize(MODULE, [MODULE.replace('    q_next = q;', '    q_next = 4\'d0;'), MODULE.replace('q <= q_next;', 'q <= a;')]);
    expect(s.live).toEqual([true, true]);
    expect(changed(s.text)).toEqual([
      DECL,
      "    if (test_mutant == 32'd1) q_next = 4'd0; else q_next = q;",
      "    if (test_mutant == 32'd2) q <= a; else q <= q_next;",
    ]);
  });

  test('two mutants of one line chain, in their order, the original last', () => {
    const s = schematize(MODULE, [MODULE.replace('a & 4\'h3', 'a & 4\'h1'), MODULE.replace('a & 4\'h3', '4\'h0'), MODULE.replace('q <= q_next;', 'q <= a;')]);
    expect(s.live).toEqual([true, true, true]);
    expect(changed(s.text)).toEqual([
      DECL,
      "assign y = (test_mutant == 32'd1) ? (a & 4'h1) : (test_mutant == 32'd2) ? (4'h0) : (a & 4'h3);",
      "    if (test_mutant == 32'd3) q <= a; else q <= q_next;",
    ]);
  });

  test('a declaration, a case label, an added line or no change: not live (its own build), the others still are', () => {
    const s = schematize(MODULE, [
      MODULE.replace("wire [3:0] t = a + 4'd1;", "wire [3:0] t = a + 4'd2;"),
      MODULE.replace("4'd1: q_next = 4'd7;", "4'd1: q_next = 4'd6;"),
      MODULE.replace('    q_next = q;', '    q_next = q;\n    q_next = a;'),
      MODULE,
      MODULE.replace('assign y = a & 4\'h3;', 'assign q_next = a;'),
      MODULE.replace('q <= q_next;', 'q <= a;'),
    ]);
    expect(s.live).toEqual([false, false, false, false, false, true]);
    expect(changed(s.text)).toEqual([DECL, "    if (test_mutant == 32'd6) q <= a; else q <= q_next;"]);
    expect(schematize(MODULE, [MODULE.replace('4\'h3', '4\'h1').replace('4\'d7', '4\'d6')]).live).toEqual([false]);
    expect(schematize(MODULE, [MODULE]).text).toBe(MODULE);
  });

  test('mutantGroup keeps the edits, tagged with their group and index', () => {
    const [a, b] = mutantGroup([(v: string) => `${v}a`, (v: string) => `${v}b`]);
    expect([a('x'), b('x')]).toEqual(['xa', 'xb']);
    expect(groupOf(b)!.index).toBe(1);
    expect(groupOf(b)!.group.map((f) => f('')).join()).toBe('a,b');
    expect(groupOf((v: string) => v)).toBeNull();
  });
});

describe('a schemata model with mutant K live runs as the mutant built alone', () => {
  // atomic_unit: a small block, two -O0 builds (the schemata of both mutants, and the first alone).
  const edits = [
    (v: string) => v.replace('assign write_back = (~op_cmp_swap_reg) | cs_match_reg;', "assign write_back = 1'b1;"),
    (v: string) => v.replace('op_wr_data_reg <= op_wr_data_next;', 'op_wr_data_reg <= ~op_wr_data_next;'),
  ];
  const [first, second] = mutantGroup(edits);
  test('the same mismatches, cycles and first mismatch; the other mutant live differs', () => {
    const o = { seed: 5, operations: 120, bigEndian: true } as const;
    const grouped = cosimAtomicUnit({ ...o, mutate: first });
    const alone = cosimAtomicUnit({ ...o, mutate: edits[0]! });
    expect(grouped.mismatches).toBeGreaterThan(0);
    expect([grouped.mismatches, grouped.cycles, grouped.firstMismatch]).toEqual([alone.mismatches, alone.cycles, alone.firstMismatch]);
    const other = cosimAtomicUnit({ ...o, mutate: second });
    expect(other.mismatches).toBeGreaterThan(0);
    expect(other.firstMismatch).not.toEqual(alone.firstMismatch);
  });
});
