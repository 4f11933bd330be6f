import { describe, expect, test } from 'vitest';
import { crc32cModule, emitVerilog, generate, parseConfig, type Module } from '../../hdl-gen/index';
import { BLOCK_WIDTHS, DATAPATH_WIDTHS } from '../../hdl-gen/gen/config';
import { REGENERATE } from '../../hdl-gen/gen/generate';
import { mpaTxModule } from '../../hdl-gen/blocks/mpa-tx';
import { mpaRxModule } from '../../hdl-gen/blocks/mpa-rx';
import { ddpRxHdrModule } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { stagTableModule } from '../../hdl-gen/blocks/stag-table';
import { ddpRxModule } from '../../hdl-gen/blocks/ddp-rx';
import { LINE_WIDTH } from '../../hdl-gen/emit/verilog';

/**
 * Every Verilog file the project generates — `rnic gen` at every datapath width with a few QPs,
 * and the single blocks at every width they are co-simulated and synthesized at (the `<name>_w<N>`
 * families of hdl-gen/gen/sources.ts) — has no line longer than 160 columns, and no two
 * temporaries that compute the same expression (hash-consing names each distinct one once).
 */

function problems(file: string, text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.length > LINE_WIDTH) out.push(`${file}:${i + 1}: ${l.length} columns: ${l.slice(0, 80)}…`);
  });
  const seen = new Map<string, string>();
  for (const [, name, rhs] of text.matchAll(/^assign (_t\d+) = ([\s\S]*?);$/gm)) {
    const key = rhs!.replace(/\s+/g, '');
    const twin = seen.get(key);
    if (twin) out.push(`${file}: ${twin} and ${name} are both ${rhs!.slice(0, 80)}`);
    seen.set(key, name!);
  }
  return out;
}

describe('rnic gen: every file', () => {
  // Each width with a different number of QPs (the top's arbiters and muxes grow with it).
  const QPS: Record<number, number> = { 8: 4, 16: 2, 32: 3, 64: 5 };
  test.each(DATAPATH_WIDTHS.map((w) => [w, QPS[w] ?? 4] as const))('width %i, %i QPs: no line over 160 columns, no duplicate temporary', (width, qps) => {
    const files = generate(parseConfig({ width, qps })).filter((f) => f.path.endsWith('.v'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((f) => problems(f.path, f.text))).toEqual([]);
  });
});

describe('single blocks at every width', () => {
  const blocks: [string, () => Module][] = [
    ...[1, 2, ...BLOCK_WIDTHS].map((w) => [`crc32c_w${w}`, () => crc32cModule(w)] as [string, () => Module]),
    ...BLOCK_WIDTHS.flatMap((w) => [
      [`mpa_tx_w${w}`, () => mpaTxModule(w)] as [string, () => Module],
      [`mpa_rx_w${w}`, () => mpaRxModule(w)] as [string, () => Module],
      [`ddp_rx_hdr_w${w}`, () => ddpRxHdrModule(w)] as [string, () => Module],
    ]),
    ...[16, 65536].map((d) => [`stag_table_d${d}`, () => stagTableModule(d)] as [string, () => Module]),
    // The one-QP receive path with its own STag table (rtl/ has the QPs' variant, the table outside).
    ...DATAPATH_WIDTHS.map((w) => [`ddp_rx_w${w}`, () => ddpRxModule(w)] as [string, () => Module]),
  ];
  test.each(blocks)('%s', (name, build) => {
    const m = build();
    expect(m.name).toBe(name);
    expect(problems(`${name}.v`, emitVerilog(m, { regenerate: REGENERATE }))).toEqual([]);
  });
});
