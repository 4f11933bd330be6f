import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { DDP_RX_HDR_WIDTHS, ddpRxHdrModule } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { DDP_RX_OUTCOMES, cosimDdpRxHdr, type DdpRxHdrCosimOptions, type DdpRxHdrCosimResult } from '../../sim/cosim/ddp-rx-hdr';
import { Opcode } from '../../ts-model/rdmap/constants';
import { SEED } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const BUILD_TIMEOUT = 300_000;

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
    BUILD_TIMEOUT,
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
    BUILD_TIMEOUT,
  );
});

describe('ddp_rx_hdr at full rate (exact Verilator cycle counts)', () => {
  const full = { sourcePause: 0, sinkPause: 0, descPause: 0 } as const;
  test.each([
    // [width, opcode, ULPDU length, cycles per ULPDU]
    [8, Opcode.WRITE, 4096, 512],
    [8, Opcode.SEND, 4096, 512],
    [8, Opcode.SEND, 4098, 513],
    [8, Opcode.READ_REQUEST, 46, 6],
    [64, Opcode.WRITE, 4096, 65],
    [64, Opcode.WRITE, 4094, 65],
    [64, Opcode.SEND, 64, 1],
    [64, Opcode.ATOMIC_REQUEST, 70, 2],
  ])('w%i, opcode %i, %i-octet ULPDUs back to back: %i cycles each', (width, opcode, length, cycles) => {
    const o = { width, seed: 21, ulpdus: 60, fixed: { opcode, length }, ...full };
    const r = cosimDdpRxHdr(o);
    expect(r.mismatches, replay(o)).toBe(0);
    expect(r.cyclesPerUlpdu).toBe(cycles);
    expect(r.cyclesPerUlpdu).toBeLessThanOrEqual(Math.ceil(length / width) + 1);
  }, BUILD_TIMEOUT);
});

describe('ddp_rx_hdr checks catch a broken RTL', () => {
  test.each([
    ['a tagged Terminate copy counted as untagged (H7)', (v: string) => v.replace("? 16'h10 : 16'h14)", "? 16'h14 : 16'h14)")],
    ['has_payload set for an empty Send', (v: string) => v.replace(/(assign has_payload = .*)\(ulpdu_len > /, '$1(ulpdu_len >= ')],
    ['the untagged offset one lane off', (v: string) => v.replace(/assign sh_data = (.*)\n/, (line) => line.replace('s_axis_tdata[63:16]', 's_axis_tdata[63:24], s_axis_tdata[7:0]'))],
  ])('%s', (_, mutate) => {
    const text = emitVerilog(ddpRxHdrModule(8));
    expect(mutate(text)).not.toBe(text);
    const r = cosimDdpRxHdr({ width: 8, seed: 3, ulpdus: 400, mutate });
    expect(r.mismatches).toBeGreaterThan(0);
  }, BUILD_TIMEOUT);
});

describe('ddp_rx_hdr Verilog', () => {
  test.each([...DDP_RX_HDR_WIDTHS])(
    'ddp_rx_hdr_w%i is lint-clean under verilator -Wall',
    (width) => expect(verilatorLint(ddpRxHdrModule(width))).toBe(''),
    60_000,
  );

  test.each([8, 64])(
    'ddp_rx_hdr_w%i synthesizes in yosys without latches',
    (width) => expect(yosysSynthNoLatch(ddpRxHdrModule(width))).toMatch(/Number of cells/),
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
  }, BUILD_TIMEOUT);
});
