import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { ddpRxModule } from '../../hdl-gen/blocks/ddp-rx';
import { ddpRxCtlModule } from '../../hdl-gen/blocks/ddp-rx-ctl';
import type { RxDutResult } from '../../sim/cosim/block-runs';
import { cosimRx, measureRxPlacement, type RxCosimOptions } from '../../sim/cosim/rx';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { withSeed } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

/** Replaces `from` once; a mutation that does not apply fails the test instead of passing vacuously. */
const swap = (from: string | RegExp, to: string) => (v: string) => {
  if (typeof from === 'string' ? !v.includes(from) : !from.test(v)) throw new Error(`mutation site not found: ${from}`);
  return v.replace(from, to);
};

/** One co-simulation run; the seed comes from RNIC_SEED and is named on failure. */
function run(salt: number, opts: Omit<RxCosimOptions, 'seed'>) {
  return withSeed(salt, (r) => cosimRx({ ...opts, seed: r.u32() }));
}

describe.each([8, 64])('ddp_rx_w%i against the model endpoint, ULPDU by ULPDU', (width) => {
  test(
    'thousands of messages of every opcode with faults: no mismatch, no write outside what the STag table allows, every error code raised',
    () => {
      const res = run(width, { width, messages: 3000, faults: 0.1 });
      expect(res.firstMismatch).toBeNull();
      expect(res.firstViolation).toBeNull();
      expect(res.mismatches).toBe(0);
      expect(res.violations).toBe(0);
      expect(res.messages).toBe(3000);
      // Every DDP and RDMAP error code of spec/ddp-rdmap.md §9, and LLP 0x03 (H1/H6).
      expect(res.errorsMissed).toEqual([]);
      for (const op of ['RDMA Write', 'RDMA Read Request', 'RDMA Read Response', 'Send', 'Send with Invalidate', 'Send with SE', 'Send with SE and Invalidate', 'Terminate', 'Immediate Data', 'Immediate Data with SE', 'Atomic Request', 'Atomic Response']) {
        expect(res.opcodes[op] ?? 0, op).toBeGreaterThan(0);
      }
      for (const c of ['zero-length tagged', 'zero-length send', 'msn-near-wrap', 'completion recv invalidate', 'completion recv-immediate', 'completion atomic', 'completion read', 'terminate-received', 'closed', 'fault ird']) {
        expect(res.coverage[c] ?? 0, c).toBeGreaterThan(0);
      }
      expect(res.responses).toBeGreaterThan(500);
    },
  );
});

// At 8 octets: at 64, mpa_rx_w64 (random segments, faults) and ddp_rx_w64 are each run above and in
// mpa-rx.test.ts, and together, with random TCP segmentation and MPA faults, inside rnic_top_w64
// (rnic.test.ts); `make regress` runs rnic_rx at both widths (20 000 messages).
describe.each([8])('rnic_rx_w%i: mpa_rx into ddp_rx against the model MPA layer and endpoint', (width) => {
  test(
    'framed TCP payload in random segments, markers and CRC per stream, MPA and DDP/RDMAP faults: no mismatch, no violation',
    () => {
      const res = run(0x100 + width, { width, messages: 1500, faults: 0.15, mpa: true });
      expect(res.firstMismatch).toBeNull();
      expect(res.firstViolation).toBeNull();
      expect([res.dut, res.mismatches, res.violations]).toEqual([`rnic_rx_w${width}`, 0, 0]);
      expect(res.fpdus).toBeGreaterThanOrEqual(res.ulpdus);
      // MPA's own verdict reaches the Terminate (0x2/0x0/0x02 for a CRC error).
      expect(res.errorsHit['MPA: CRC error'] ?? 0).toBeGreaterThan(0);
    },
  );
});

describe('the checks catch a broken receive path', () => {
  // The mutants of ddp_rx_w8 (its own file and those of its blocks): one schemata build per file
  // for the mutants it can hold (sim/harness/mutant-schemata.ts); a member that is not of the file
  // at hand throws there and is left out.
  const [grantAll, wrongTerminate, readOvertakesWrite, idleWhileBusy, strobeTooMany] = mutantGroup([
    swap('assign rsp_fault = lk2_fault_reg;', "assign rsp_fault = 3'd0;"),
    swap("ERR_DDP_BASE_BOUNDS = 14'h45", "ERR_DDP_BASE_BOUNDS = 14'h85"),
    // ~cmd_valid_reg is read in several places: the emitter may name it (a temporary _tN).
    swap(/ \| \(~\((?:\(~cmd_valid_reg\)|_t\d+) & place_idle\)\)/, ''),
    swap('assign idle = rx_done & resp_idle', 'assign idle = place_idle & resp_idle'),
    swap('assign mem_wr_strb = wr_pick_atomic ? atomic_wr_strb : place_wr_strb;', "assign mem_wr_strb = wr_pick_atomic ? atomic_wr_strb : (place_wr_strb | 8'h80);"),
  ]);
  test(
    'an STag table that grants everything: writes outside the regions are violations',
    () => {
      const res = run(0x6b, {
        width: 8,
        messages: 600,
        faults: 0.15,
        keepGoing: true,
        mutateModule: `stag_table_d${DEFAULT_CONFIG.stagDepth}`,
        mutate: grantAll,
      });
      expect(res.violations).toBeGreaterThan(0);
      expect(res.mismatches).toBeGreaterThan(0);
    },
  );
  test(
    'a wrong Terminate code is a mismatch',
    () => {
      const res = run(0x6c, {
        width: 8,
        messages: 1500,
        faults: 0.2,
        mutateModule: 'ddp_rx_ctl_q1',
        mutate: wrongTerminate,
      });
      expect(res.firstMismatch?.actual).toMatch(/terminate-sent 0x1\/0x1\/0x02/);
    },
  );
  test(
    'a Read Request answered before the Write ahead of it has landed is a mismatch (RFC 5040 §5.5 rule 6)',
    () => {
      const res = run(0x6e, {
        width: 8,
        messages: 1500,
        faults: 0,
        // A slow write port lets the response's reads overtake the placement ahead of them.
        writeBackpressure: 0.9,
        mutateModule: 'ddp_rx_ctl_q1',
        mutate: readOvertakesWrite,
      });
      expect(res.mismatches).toBeGreaterThan(0);
    },
  );
  test(
    'idle while the receive side is busy is a violation (idle implies rx_idle, every cycle)',
    () => {
      const res = run(0x6f, {
        width: 8,
        messages: 50,
        faults: 0,
        mutate: idleWhileBusy,
      });
      expect(res.firstViolation).toMatch(/idle is 1 while rx_idle is 0 \(cycle \d+\)/);
    },
  );
  test(
    "rx_idle while mpa_rx still holds an FPDU is a violation: an event follows with nothing received since (the campaign's rnic_rx_w8 #3)",
    () => {
      const res = run(0x70, {
        width: 8,
        messages: 50,
        faults: 0,
        mpa: true,
        mutateModule: 'rnic_rx_w8',
        mutate: swap('assign rx_idle = ddp_rx_idle & mpa_idle;', 'assign rx_idle = ddp_rx_idle;'),
      });
      expect(res.firstViolation).toMatch(/an event came out after rx_idle with nothing received since \(cycle \d+\)/);
    },
  );
  test(
    'one octet strobed too many is a violation',
    () => {
      const res = run(0x6d, {
        width: 8,
        messages: 300,
        faults: 0,
        mutate: strobeTooMany,
      });
      expect(res.violations).toBeGreaterThan(0);
    },
  );
});

describe('placement rate (Verilator cycles, no back-pressure)', () => {
  test.each([8, 64])('4 KiB Write ULPDUs at W = %i: one memory beat per input beat after the first ULPDU', (width) => {
    const r = measureRxPlacement(width, 4096, 32);
    // The steady state is the input's rate: the header's octets are the only loss.
    expect(r.efficiency).toBeGreaterThanOrEqual(r.bound - 1e-9);
    expect(r.efficiency).toBeGreaterThan(0.99);
    // Store and forward: the first write waits for the first ULPDU (its beats + a few cycles; one
    // of them the descriptor's input register in ddp_rx_ctl, s_desc_tready a flip-flop).
    expect(r.latency).toBeLessThanOrEqual(4096 / width + 11);
  });
});

describe('ddp_rx RTL', () => {
  test('ddp_rx_ctl_q16 is lint-clean under verilator -Wall and synthesizes without latches', () => {
    const m = ddpRxCtlModule({ qps: 16 });
    expect(verilatorLint(m)).toBe('');
    yosysSynthNoLatch(m);
  });
  test.each([8, 64])('ddp_rx_w%i: every block connected, the whole hierarchy lint-clean under verilator -Wall', (w) => {
    const m = ddpRxModule(w);
    expect(m.instances.map((i) => i.module.name).sort()).toEqual([`ddp_rx_hdr_w${w}`, `ddp_rx_place_w${w}`, 'ddp_rx_ctl_q1', `rdmap_tx_resp_w${w}_q1`, 'stag_table_d256'].sort());
    expect(verilatorLint(m)).toBe('');
  });
  test('bad widths are refused with the value named', () => {
    expect(() => ddpRxModule(4)).toThrow(/got 4/);
  });
});

describe('rnic cosim --dut rx', () => {
  const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'rx', ...args], { encoding: 'utf8' });

  // rtl/ has no ddp_rx (rnic_top shares its blocks between the QPs): this one is generated.
  test('runs the seeded workload on ddp_rx_w8 with faults and exits 0', () => {
    const p = rnic('--width', '8', '--frames', '300', '--seed', '7', '--faults', '0.2', '--json');
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout) as RxDutResult;
    expect([r.dut, r.width, r.seed, r.messages, r.mismatches, r.violations]).toEqual(['rx', 8, 7, 300, 0, 0]);
    expect(r.efficiency).toBeGreaterThan(0.99);
    expect(Object.keys(r.errorsHit).length).toBeGreaterThan(5);
  });

  test('a datapath narrower than 8 octets is refused, naming the flag', () => {
    const p = rnic('--width', '4', '--frames', '10');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/--width must be one of 8, 16, 32, 64 for rx, got 4/);
  });
});
