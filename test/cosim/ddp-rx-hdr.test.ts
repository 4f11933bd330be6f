import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { DDP_RX_HDR_WIDTHS, ddpRxHdrModule } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { DDP_RX_OUTCOMES, cosimDdpRxHdr, type DdpRxHdrCosimOptions, type DdpRxHdrCosimResult } from '../../sim/cosim/ddp-rx-hdr';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { Opcode } from '../../ts-model/rdmap/constants';
import { SEED } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const replay = (o: DdpRxHdrCosimOptions) => `replay: cosimDdpRxHdr(${JSON.stringify(o)}) (RNIC_SEED=${SEED})`;

describe.each([8, 64])('ddp_rx_hdr_w%i against checkHeader (H1-H7)', (width) => {
  test.each([true, false])(
    'every descriptor field and payload octet, random ULPDUs and faults, back-pressure on all ports, rfc7306 %s',
    (rfc7306) => {
      const o = { width, seed: (SEED ^ (width * 7919) ^ (rfc7306 ? 1 : 2)) >>> 0, ulpdus: 1500, rfc7306 };
      const r = cosimDdpRxHdr(o);
      expect(r.firstMismatch, replay(o)).toBeUndefined();
      expect(r.mismatches, replay(o)).toBe(0);
      for (const outcome of DDP_RX_OUTCOMES) {
        if (outcome === 'H4 extension' && rfc7306) continue;
        expect(r.coverage.outcomes[outcome], `${outcome} never happened; ${replay(o)}`).toBeGreaterThan(0);
      }
      for (let op = 0; op <= 0xf; op++) expect(r.coverage.opcodes[op], `opcode ${op}; ${replay(o)}`).toBeGreaterThan(0);
      for (let op = 0; op <= (rfc7306 ? Opcode.ATOMIC_RESPONSE : Opcode.TERMINATE); op++) {
        expect(r.coverage.okOpcodes[op], `passing opcode ${op}; ${replay(o)}`).toBeGreaterThan(0);
      }
      expect(r.coverage.payloadPackets).toBeGreaterThan(100);
      expect(r.coverage.emptyData).toBeGreaterThan(0);
    },
  );
});

describe('ddp_rx_hdr at the other widths', () => {
  test.each([4, 16, 32])(
    'ddp_rx_hdr_w%i matches checkHeader under back-pressure',
    (width) => {
      const o = { width, seed: (SEED ^ (width * 104729)) >>> 0, ulpdus: 500 };
      const r = cosimDdpRxHdr(o);
      expect(r.firstMismatch, replay(o)).toBeUndefined();
      expect(r.mismatches).toBe(0);
    },
  );
});

describe('ddp_rx_hdr at full rate (exact Verilator cycle counts)', () => {
  const full = { sourcePause: 0, sinkPause: 0, descPause: 0 } as const;
  // One input beat per cycle at every width, ULPDUs back to back: a residual flush (the last beat
  // holds more data than the header offset, as in 4096 + W − 1) shares the next ULPDU's first cycle.
  const writes = [...DDP_RX_HDR_WIDTHS].flatMap((w) => [4096, 4096 + w - 1].map((len) => [w, Opcode.WRITE, len] as const));
  test.each([
    // [width, opcode, ULPDU length]
    ...writes,
    [8, Opcode.SEND, 4096],
    [8, Opcode.SEND, 4098],
    [8, Opcode.READ_REQUEST, 46],
    [16, Opcode.SEND, 4096 + 15],
    [16, Opcode.SEND, 35],
    [64, Opcode.WRITE, 4094],
    [64, Opcode.SEND, 64],
    [64, Opcode.SEND, 4096 + 63],
    [64, Opcode.ATOMIC_REQUEST, 70],
  ] as const)('w%i, opcode %i, %i-octet ULPDUs back to back: one cycle per input beat', (width, opcode, length) => {
    const o = { width, seed: 21, ulpdus: 60, fixed: { opcode, length }, ...full };
    const r = cosimDdpRxHdr(o);
    expect(r.mismatches, replay(o)).toBe(0);
    expect(r.beatsPerUlpdu).toBe(Math.ceil(length / width));
    expect(r.cyclesPerUlpdu, replay(o)).toBe(Math.ceil(length / width));
  });

  test.each([...DDP_RX_HDR_WIDTHS])(
    'w%i, random ULPDUs and faults back to back (one-beat ULPDUs after a residual flush): one cycle per input beat',
    (width) => {
      const o = { width, seed: (SEED ^ (width * 6151)) >>> 0, ulpdus: 1000, ...full };
      const r = cosimDdpRxHdr(o);
      expect(r.firstMismatch, replay(o)).toBeUndefined();
      expect(r.mismatches, replay(o)).toBe(0);
      expect(r.cycles, replay(o)).toBeLessThanOrEqual(r.inputBeats + 2);
    },
  );
});

describe('ddp_rx_hdr checks catch a broken RTL', () => {
  const cases = [
    ['a tagged Terminate copy counted as untagged (H7)', (v: string) => v.replace("? 16'h10 : 16'h14)", "? 16'h14 : 16'h14)")],
    ['has_payload set for an empty Send', (v: string) => v.replace(/(assign has_payload = .*)\(ulpdu_len > /, '$1(ulpdu_len >= ')],
    ['the untagged offset one lane off', (v: string) => v.replace(/assign sh_data = (.*)\n/, (line) => line.replace('s_axis_tdata[63:16]', 's_axis_tdata[63:24], s_axis_tdata[7:0]'))],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, mutate]) => mutate));
  test.each(cases.map(([name], i) => [name, mutants[i]!] as const))('%s', (_, mutate) => {
    const text = emitVerilog(ddpRxHdrModule(8));
    expect(mutate(text)).not.toBe(text);
    const r = cosimDdpRxHdr({ width: 8, seed: 3, ulpdus: 400, mutate });
    expect(r.mismatches).toBeGreaterThan(0);
  });

  test('w64: a one-beat ULPDU right after a residual flush dropped', () => {
    // The one-beat packet waits in the residual register: forgetting to flush it loses it.
    const mutate = (v: string) => v.replace(/(if \(\w+ & flush_reg\) begin\s*flush_next = )1'b1;/, (_, head: string) => `${head}1'b0;`);
    const text = emitVerilog(ddpRxHdrModule(64));
    expect(mutate(text)).not.toBe(text);
    const r = cosimDdpRxHdr({ width: 64, seed: 3, ulpdus: 400, sourcePause: 0, sinkPause: 0, descPause: 0, mutate });
    expect(r.mismatches).toBeGreaterThan(0);
  });
});

describe('ddp_rx_hdr Verilog', () => {
  test.each([...DDP_RX_HDR_WIDTHS])(
    'ddp_rx_hdr_w%i is lint-clean under verilator -Wall',
    (width) => expect(verilatorLint(ddpRxHdrModule(width))).toBe(''),
    60_000,
  );

  test.each([8, 64])(
    'ddp_rx_hdr_w%i synthesizes in yosys without latches (to gates at 8 octets, the coarse netlist at 64)',
    (width) => expect(yosysSynthNoLatch(ddpRxHdrModule(width), [], { gates: width === 8 })).toMatch(/Number of cells/),
    120_000,
  );
});

describe('rnic cosim --dut ddp_rx_hdr', () => {
  const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'ddp_rx_hdr', ...args], { encoding: 'utf8' });

  test('runs the seeded workload on the committed rtl/ (ddp_rx_hdr_w8) with faults and exits 0', () => {
    const p = rnic('--width', '8', '--frames', '600', '--seed', '11', '--faults', '0.4', '--rtl', 'rtl', '--json');
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout) as DdpRxHdrCosimResult;
    expect([r.module, r.rtl.endsWith('rtl'), r.ulpdus, r.mismatches]).toEqual(['ddp_rx_hdr_w8', true, 600, 0]);
    expect(r.coverage.outcomes['H7 long']).toBeGreaterThan(0);
  });
});
