import { ModuleBuilder, type Module } from '../core/module';
import type { DdpRxOptions } from './ddp-rx';
import { rnicCfgAxilModule } from './rnic-cfg-axil';
import { rnicTopModule } from './rnic-top';
import { rnicTopAxiMemModule } from './rnic-top-axi-mem';
import { STAG_TABLE_DEPTH } from './stag-table';

/**
 * The integrator's top, rnic_top_axil_w<W>: rnic_top_w<W> with its configuration inputs (a QP's
 * context on cfg_*, the STag table's writes on stag_cfg_*) behind an AXI4-Lite slave
 * (rnic_cfg_axil, register-map.md), and every other port passed through unchanged, under the
 * same name. The ports the two instances share are exactly the configuration block's outputs and
 * inputs: whatever rnic_top adds to its configuration later must be in the register map's records
 * (QP_CFG, stagCfgLayout) to reach the host, and anything else stays a port of the wrapper.
 */
export function rnicTopAxilModule(bytes: number, qps = 2, opts: DdpRxOptions = {}, memory: 'native' | 'axi4' = 'native'): Module {
  const stagDepth = opts.stagDepth ?? STAG_TABLE_DEPTH;
  // With memory 'axi4', the top whose host memory is an AXI4 master (its m_axi_* pass through).
  const top = memory === 'axi4' ? rnicTopAxiMemModule(bytes, qps, opts) : rnicTopModule(bytes, qps, opts);
  const cfg = rnicCfgAxilModule({ width: bytes, qps, stagDepth });
  const m = new ModuleBuilder(
    `rnic_top_axil_w${bytes}`,
    `The iWARP RNIC (${top.name}, ${qps} QP${qps > 1 ? 's' : ''}, ${bytes} octets per beat) configured over AXI4-Lite: its QP contexts\n` +
      `(cfg_*) and STag table writes (stag_cfg_*) are registers of ${cfg.name} (register-map.md);\n` +
      `every other port is ${top.name}'s, passed through.`,
    { bytes, qps, stagDepth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const axil = cfg.ports.filter((p) => p.name.startsWith('s_axil_'));
  const cfgConns: Record<string, ReturnType<ModuleBuilder['wire']>> = { clk, rst };
  for (const p of axil) cfgConns[p.name] = m.portLike(cfg, p.name);
  // Between the two: the configuration block's ports to the top, a wire each, named as the port.
  const inner = new Set(cfg.ports.filter((p) => !p.name.startsWith('s_axil_') && p.name !== 'clk' && p.name !== 'rst').map((p) => p.name));
  const topConns: Record<string, ReturnType<ModuleBuilder['wire']>> = { clk, rst };
  for (const p of top.ports) {
    if (p.name === 'clk' || p.name === 'rst') continue;
    if (inner.has(p.name)) {
      const theirs = cfg.ports.find((x) => x.name === p.name)!;
      if (theirs.width !== p.width || theirs.role === p.role) throw new Error(`internal: rnic_cfg_axil's ${p.name} does not fit rnic_top's`);
      const w = m.wire(p.name, p.width, { ...(p.doc && { doc: p.doc }) });
      topConns[p.name] = w;
      cfgConns[p.name] = w;
      inner.delete(p.name);
    } else topConns[p.name] = m.portLike(top, p.name);
  }
  if (inner.size) throw new Error(`internal: rnic_top has no port for rnic_cfg_axil's ${[...inner].join(', ')}`);
  m.instance(cfg, 'u_cfg', cfgConns);
  m.instance(top, 'u_rnic', topConns);
  return m.build();
}
