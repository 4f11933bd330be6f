/**
 * Builds of the hand-written Verilog fixtures in test/fixtures/verilog, shared by the test/sim
 * suites, and the input-side stability check their AXI4-Stream tests share. Builds are cached
 * (.cache/verilator), so only the first suite to ask pays for one.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { axisPortSpecs } from '../../sim/cocotb/axis-ports';
import type { Component } from '../../sim/cocotb/component';
import type { BuildOptions } from '../../sim/verilator/build';
import type { SimModel } from '../../sim/verilator/model';
import type { PortSpec } from '../../sim/verilator/port-spec';
import { hex } from '../support/random';

export const FIXTURE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'verilog');
export const fixture = (file: string): string => path.join(FIXTURE_DIR, file);

const clk: PortSpec = { name: 'clk', direction: 'input', width: 1 };
const rst: PortSpec = { name: 'rst', direction: 'input', width: 1 };

export const COUNTER_WIDTH = 8;

export const counterBuild = (extra: Partial<BuildOptions> = {}): BuildOptions => ({
  top: 'counter',
  sources: [fixture('counter.v')],
  ports: [clk, rst, { name: 'count', direction: 'output', width: COUNTER_WIDTH }],
  ...extra,
});

/** One width per storage class Verilator uses: CData, QData (33 and 64), VlWide (65 and 200). */
export const PASSTHROUGH_WIDTHS = [7, 33, 64, 65, 200] as const;
export const PASSTHROUGH_REGISTERED_WIDTH = 200;

export const passthroughBuild = (): BuildOptions => ({
  top: 'wide_passthrough',
  sources: [fixture('wide_passthrough.v')],
  ports: [
    clk,
    ...PASSTHROUGH_WIDTHS.map((w): PortSpec => ({ name: `a_${w}`, direction: 'input', width: w })),
    ...PASSTHROUGH_WIDTHS.map((w): PortSpec => ({ name: `y_${w}`, direction: 'output', width: w })),
    { name: `q_${PASSTHROUGH_REGISTERED_WIDTH}`, direction: 'output', width: PASSTHROUGH_REGISTERED_WIDTH },
  ],
});

export const SKID_DATA_WIDTH = 64;

export const skidRegisterBuild = (extra: Partial<BuildOptions> = {}): BuildOptions => ({
  top: 'axis_skid_register',
  sources: [fixture('axis_skid_register.v')],
  ports: [
    clk,
    rst,
    ...axisPortSpecs('s_axis', 'in', { dataWidth: SKID_DATA_WIDTH }),
    ...axisPortSpecs('m_axis', 'out', { dataWidth: SKID_DATA_WIDTH }),
  ],
  ...extra,
});

export const plusargEchoBuild = (): BuildOptions => ({
  top: 'plusarg_echo',
  sources: [fixture('plusarg_echo.v')],
  ports: [clk, { name: 'value', direction: 'output', width: 16 }, { name: 'flag', direction: 'output', width: 1 }],
});

export const recordSliceBuild = (): BuildOptions => ({
  top: 'record_slice',
  sources: [fixture('record_slice.v')],
  ports: [
    clk,
    rst,
    { name: 's_req_valid', direction: 'input', width: 1 },
    { name: 's_req_ready', direction: 'output', width: 1 },
    { name: 's_req_kind', direction: 'input', width: 3 },
    { name: 's_req_len', direction: 'input', width: 32 },
    { name: 's_req_addr', direction: 'input', width: 64 },
    { name: 's_req_err', direction: 'input', width: 14 },
    { name: 'm_rsp_valid', direction: 'output', width: 1 },
    { name: 'm_rsp_ready', direction: 'input', width: 1 },
    { name: 'm_rsp_kind', direction: 'output', width: 3 },
    { name: 'm_rsp_len', direction: 'output', width: 32 },
    { name: 'm_rsp_addr', direction: 'output', width: 64 },
    { name: 'm_rsp_err', direction: 'output', width: 14 },
    ...axisPortSpecs('s_axis', 'in', { dataWidth: 64 }),
    { name: 's_axis_tid', direction: 'input', width: 4 },
    ...axisPortSpecs('m_axis', 'out', { dataWidth: 64 }),
    { name: 'm_axis_tid', direction: 'output', width: 4 },
  ],
});

/**
 * Checks the AXI4-Stream rule on the DUT's input side from the pre-edge snapshots: once tvalid is
 * offered without tready, the next edge still sees tvalid and the same payload. `stalls` counts
 * the edges that held an offered beat.
 */
export class StabilityChecker implements Component {
  private held: string | undefined;
  violations = 0;
  stalls = 0;
  constructor(private readonly model: SimModel) {}
  sample(): void {
    const m = this.model;
    const valid = m.peekPre('s_axis_tvalid') === 1n;
    const payload = `${hex(m.peekPreBytes('s_axis_tdata'))}/${m.peekPre('s_axis_tkeep')}/${m.peekPre('s_axis_tlast')}/${m.peekPre('s_axis_tuser')}`;
    if (this.held !== undefined && (!valid || payload !== this.held)) this.violations++;
    this.held = valid && m.peekPre('s_axis_tready') === 0n ? payload : undefined;
    if (this.held !== undefined) this.stalls++;
  }
}
