import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDescendants } from '../../hdl-gen/core/hierarchy';
import type { Module } from '../../hdl-gen/core/module';
import { emitVerilog } from '../../hdl-gen/emit/verilog';

/**
 * Runs `body` on the emitted Verilog of `m` and of the modules it instantiates, one file each in a
 * fresh temporary directory (`files`: children first, `m` last).
 */
function withVerilog<T>(m: Module, body: (dir: string, files: string[]) => T): T {
  const dir = mkdtempSync(join(tmpdir(), `${m.name}-`));
  try {
    const files = withDescendants(m).map((x) => {
      const file = join(dir, `${x.name}.v`);
      writeFileSync(file, emitVerilog(x));
      return file;
    });
    return body(dir, files);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What `verilator --lint-only -Wall` prints on the module (throws on a non-zero exit); '' when clean. */
export function verilatorLint(m: Module): string {
  return withVerilog(m, (_dir, files) =>
    execFileSync('verilator', ['--lint-only', '-Wall', '--top-module', m.name, ...files], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(),
  );
}

/**
 * yosys `synth` of the module down to gates, memories kept as $mem cells, failing (throwing) on an
 * error or on any latch; returns the `stat` text. `extra` runs after synth (more `select -assert-*`
 * checks). `gates: false` stops at the coarse netlist (elaboration, `proc`, memory inference, `opt`:
 * where latches, undriven nets and unsynthesizable constructs show) and adds `check -assert`: for a
 * block's wide variant, whose gates come from the same generator code as the narrow one mapped in
 * the same test file, and whose mapping is most of the run (ddp_tx_w64: 30 s against 7 s coarse).
 */
export function yosysSynthNoLatch(m: Module, extra: readonly string[] = [], { gates = true }: { readonly gates?: boolean } = {}): string {
  return withVerilog(m, (dir, files) => {
    const stat = join(dir, 'stat.txt');
    // `synth` without its memory_map step: memories stay $mem cells (an FPGA flow maps them to
    // block RAM), where generic synthesis would expand a 256-beat FIFO into flip-flops for minutes.
    const coarse = [`synth -top ${m.name} -run begin:fine`];
    const synth = gates ? [...coarse, 'opt -fast -full', 'techmap', 'opt -fast', 'abc -fast', 'opt -fast', 'check'] : [...coarse, 'check -assert'];
    const script = [...files.map((f) => `read_verilog ${f}`), ...synth, `tee -q -o ${stat} stat`, 'select -assert-none t:$_DLATCH* t:$dlatch* t:$adlatch', ...extra].join('; ');
    execFileSync('yosys', ['-q', '-p', script], { encoding: 'utf8' });
    return readFileSync(stat, 'utf8');
  });
}
