import { describe, expect, test } from 'vitest';
import { cosimCfgAxil } from '../../sim/cosim/rnic-cfg-axil';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { SEED } from '../support/random';

/**
 * rnic_cfg_axil (hdl-gen/blocks/rnic-cfg-axil.ts), the AXI4-Lite register block in front of
 * rnic_top's configuration ports, alone in Verilator (sim/cosim/rnic-cfg-axil.ts): random register
 * traffic against the model of the same register map, and host programs (the register-map
 * encoder of sim/host/axil-config.ts) against the port fields the top's bench drives directly.
 */
describe.each([
  ['the default configuration', { width: 8, qps: 1024, stagDepth: 4096 }],
  ['5 QPs (a QP count that is not a power of two), 16 STags', { width: 64, qps: 5, stagDepth: 16 }],
])('rnic_cfg_axil with %s', (_label, config) => {
  test('register traffic and host programs under random AXI4-Lite timing: every response, read and port record as the model says', () => {
    const seed = (SEED ^ Math.imul(config.qps, 0x9e3779b1)) >>> 0;
    const res = cosimCfgAxil({ seed, ops: 3000, programs: 40, config });
    const replay = `replay: cosimCfgAxil({ seed: ${seed}, ops: 3000, programs: 40, config: ${JSON.stringify(config)} })`;
    expect(res.firstMismatch, replay).toBeNull();
    expect(res.violations, replay).toEqual([]);
    expect(res.mismatches).toBe(0);
    // Every response code on both channels, reads racing writes, ports held by back-pressure,
    // and records out of both ports (phase 1's commits and phase 2's programs).
    for (const k of ['write OKAY', 'write SLVERR', 'write DECERR', 'read OKAY', 'read DECERR']) expect(res.responses[k] ?? 0, k).toBeGreaterThan(50);
    expect(res.racingReads).toBeGreaterThan(10);
    expect(res.heldCycles).toBeGreaterThan(500);
    expect(res.commits.qp).toBeGreaterThan(100);
    expect(res.commits.stag).toBeGreaterThan(100);
  });
});

/** Each mutant of the generated Verilog must be caught: a mismatch or a protocol violation. */
describe('the rnic_cfg_axil checks have teeth', () => {
  const config = { width: 8, qps: 5, stagDepth: 16 };
  const once = (from: string, to: string) => (v: string) => {
    if (!v.includes(from)) throw new Error(`mutant: '${from}' is not in the Verilog`);
    return v.replace(from, to);
  };
  const cases = [
    ['a write to a busy port does not wait (its record changes under cfg_valid)', once('& qp_pending_reg;', '& 1\'b0;')],
    ['wstrb is ignored', once("{{8{w_strb_reg[3]}}, {8{w_strb_reg[2]}}, {8{w_strb_reg[1]}}, {8{w_strb_reg[0]}}}", "32'hffffffff")],
    ['an unmapped write answers OKAY', once("        default: begin\n                b_resp_next = RESP_DECERR;", "        default: begin\n                b_resp_next = RESP_OKAY;")],
    ['bvalid drops without bready', once("if (b_valid_reg & s_axil_bready) begin", "if (b_valid_reg) begin")],
    ['a QP commit is taken without cfg_ready', once("if (qp_pending_reg & cfg_ready) begin", "if (qp_pending_reg) begin")],
    ['QP_PD reads QP_IRD', once("rd_data = {16'h0, qp_pd_reg};", "rd_data = {16'h0, qp_ird_reg};")],
    ['a commit beyond the QPs is taken', once('qp_commit_write < 32\'h5', "qp_commit_write < 32'h8")],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, mutate]) => mutate));
  test.each(cases.map(([name], i) => [name, mutants[i]!] as const))('%s', (_name, mutate) => {
    const res = cosimCfgAxil({ seed: SEED, ops: 1500, programs: 20, config, mutate });
    expect(res.mismatches + res.violations.length, 'the mutant went unnoticed').toBeGreaterThan(0);
  });
});
