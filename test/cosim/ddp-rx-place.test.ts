import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DDP_RX_PLACE_LATENCY, ddpRxPlaceModule } from '../../hdl-gen/blocks/ddp-rx-place';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { cosimDdpRxPlace, type DdpRxPlaceCosimOptions, type DdpRxPlaceResult } from '../../sim/cosim/ddp-rx-place';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { withSeed } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const run = (salt: number, o: Omit<DdpRxPlaceCosimOptions, 'seed'>): DdpRxPlaceResult =>
  withSeed(salt, (r) => {
    const opts = { ...o, seed: r.u32() };
    const res = cosimDdpRxPlace(opts);
    // withSeed adds the replay line to a failure thrown here.
    const bad = res.violations + res.memoryMismatches + (res.writeBeats !== res.expectedWriteBeats ? 1 : 0);
    if (bad > 0 && !o.mutate) throw new Error(`${res.module}: ${res.violations} violations, ${res.memoryMismatches} octets differ, ${res.writeBeats}/${res.expectedWriteBeats} write beats\n  ${res.firstViolations.join('\n  ')}`);
    return res;
  });

describe.each([8, 64])('ddp_rx_place_w%i places random packets', (width) => {
  test(
    'every octet lands at addr + i and nowhere else, under gaps, back-pressure and early, mid-packet and late commands',
    () => {
      const r = run(width, { width, packets: 2000 });
      expect([r.violations, r.outside, r.memoryMismatches]).toEqual([0, 0, 0]);
      expect(r.writeBeats).toBe(r.expectedWriteBeats);
      const c = r.coverage;
      for (const [k, v] of Object.entries(c)) expect(v, `coverage ${k}`).toBeGreaterThan(20);
      expect(c.discarded / r.packets).toBeGreaterThan(0.1);
    },
  );
});

describe('ddp_rx_place at full rate (exact Verilator cycle counts, wr_ready = 1, commands early)', () => {
  const full = { sourcePause: 0, wrPause: 0, cmdPause: 0, earlyCommands: true, discardRate: 0, length: 4096 } as const;
  test.each([8, 64])('w%i: aligned back-to-back 4096-octet packets take one cycle per beat plus the latency', (width) => {
    const r = run(100 + width, { width, packets: 16, align: 'aligned', ...full });
    expect(r.inputBeats).toBe((16 * 4096) / width);
    expect(r.writeBeats).toBe(r.inputBeats);
    expect(r.cycles).toBe(r.inputBeats + DDP_RX_PLACE_LATENCY);
  });

  test.each([8, 64])('w%i: unaligned 4096-octet packets cost one cycle each, for the flush beat', (width) => {
    const r = run(200 + width, { width, packets: 16, align: 'unaligned', ...full });
    // A 4096-octet packet at an unaligned address touches 4096/W + 1 blocks.
    expect(r.writeBeats).toBe(r.inputBeats + 16);
    expect(r.cycles).toBe(r.writeBeats + DDP_RX_PLACE_LATENCY);
  });
});

describe('ddp_rx_place checks catch a broken RTL', () => {
  const cases: [string, (v: string) => string, (r: DdpRxPlaceResult) => number][] = [
    ['rotated lanes left unmasked in the strobe (writes below addr)', (v) => v.replace('(rot_keep & (~carry_lanes))', 'rot_keep'), (r) => r.outside],
    ['the 2-lane rotation stage rotating by one lane', (v) => v.replace('{rot_data_0[47:0], rot_data_0[63:48]}', '{rot_data_0[55:0], rot_data_0[63:56]}'), (r) => r.memoryMismatches],
    ['idle ignoring the write still held in the output register', (v) => v.replace('~(act_valid_reg | pend_valid_reg | out_valid_reg)', '~(act_valid_reg | pend_valid_reg)'), (r) => r.violations],
  ];
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, mutate]) => mutate));
  test.each(cases.map(([name, , failures], i) => [name, mutants[i]!, failures] as const))('%s', (_, mutate, failures) => {
    const text = emitVerilog(ddpRxPlaceModule(8));
    expect(mutate(text)).not.toBe(text);
    const r = run(300, { width: 8, packets: 300, mutate });
    expect(failures(r)).toBeGreaterThan(0);
  });

  test('the first mismatch names the cycle of the write that put the wrong octet there', () => {
    const r = run(300, { width: 8, packets: 300, mutate: mutants[1]! });
    expect(r.memoryMismatches).toBeGreaterThan(0);
    const m = r.firstMismatch!;
    expect(m.what).toMatch(/^memory at 0x[0-9a-f]+$/);
    // A write beat of the run: after the first input beat, no later than the last write.
    expect(m.cycle).toBeGreaterThan(0);
    expect(m.expected).not.toBe(m.actual);
  });
});

describe('ddp_rx_place Verilog', () => {
  test.each([8, 64])('ddp_rx_place_w%i is lint-clean under verilator -Wall', (width) => expect(verilatorLint(ddpRxPlaceModule(width))).toBe(''), 60_000);

  // The default 8 KiB FIFO maps to thousands of flip-flops in a generic synth; a small one
  // exercises the same logic.
  test.each([8, 64])(
    'ddp_rx_place_w%i synthesizes in yosys without latches (to gates at 8 octets, the coarse netlist at 64)',
    (width) => expect(yosysSynthNoLatch(ddpRxPlaceModule(width, 256), [], { gates: width === 8 })).toMatch(/Number of cells/),
    120_000,
  );

  test('ddp_rx_place_w64: yosys infers the FIFO as one RAM with a clocked read port', () => {
    const m = ddpRxPlaceModule(64);
    const dir = mkdtempSync(join(tmpdir(), 'ddp-rx-place-'));
    try {
      const file = join(dir, `${m.name}.v`);
      const dump = join(dir, 'mem.il');
      writeFileSync(file, emitVerilog(m));
      execFileSync('yosys', ['-q', '-p', `read_verilog ${file}; hierarchy -top ${m.name}; proc; opt; memory -nomap; opt_clean; select -assert-count 1 t:$mem_v2; tee -q -o ${dump} dump t:$mem_v2`], { encoding: 'utf8' });
      const il = readFileSync(dump, 'utf8');
      const param = (name: string) => new RegExp(`parameter \\\\${name} (\\S+)`).exec(il)?.[1];
      expect([param('SIZE'), param('WIDTH'), param('RD_PORTS'), param('WR_PORTS')]).toEqual(['128', String(8 * 64 + 6 + 1), '1', '1']);
      expect(param('RD_CLK_ENABLE')).toMatch(/^\d+'1$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('rejects a width or FIFO size it cannot build', () => {
    expect(() => ddpRxPlaceModule(4)).toThrow(/got 4/);
    expect(() => ddpRxPlaceModule(8, 16)).toThrow(RangeError);
    expect(() => ddpRxPlaceModule(8, 3000)).toThrow(/got 3000/);
  });
});

describe('rnic cosim --dut ddp_rx_place', () => {
  test('runs the seeded workload on the committed rtl/ and exits 0 with no mismatch', () => {
    const p = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'ddp_rx_place', '--frames', '60', '--seed', '2', '--rtl', 'rtl', '--json'], { encoding: 'utf8' });
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout);
    expect(r).toMatchObject({ dut: 'ddp_rx_place', seed: 2, mismatches: 0 });
    expect(r.writeBeats).toBe(r.expectedWriteBeats);
    expect(r.replay).toBe('rnic cosim --dut ddp_rx_place --width 8 --seed 2 --frames 60 --rtl rtl --vcd ddp_rx_place.vcd');
  });
});
