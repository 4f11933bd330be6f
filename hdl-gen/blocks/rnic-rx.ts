import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { ddpRxModule, type DdpRxOptions } from './ddp-rx';
import { mpaRxModule } from './mpa-rx';

/**
 * The receive half of the RNIC for one QP: in-order TCP payload in, host memory, events and
 * response ULPDUs out. `mpa_rx_w<W>` (markers, FPDU delineation, CRC) feeds `ddp_rx_w<W>` as it
 * is: its m_axis tuser (the FPDU passed) and err_code are ddp_rx's verdict inputs, so a failed FPDU
 * is never placed and ends the stream with the LLP Terminate. Every other port of the two blocks is
 * a port of this one, under its own name (mpa_rx's status as `mpa_*`).
 */
export function rnicRxModule(bytes: number, opts: DdpRxOptions = {}): Module {
  const mpa = mpaRxModule(bytes);
  const rx = ddpRxModule(bytes, opts);
  const m = new ModuleBuilder(
    `rnic_rx_w${bytes}`,
    `RNIC receive path of one QP, ${bytes} octets per beat: mpa_rx (RFC 5044 markers, FPDUs, CRC-32C) into\n` +
      'ddp_rx (DDP/RDMAP checks, STag protection, placement, atomics, responses). s_axis: in-order TCP payload.',
    { bytes },
  );
  const clk = m.input('clk', 1, { group: 'Clock and synchronous active-high reset' });
  const rst = m.input('rst', 1, { group: 'Clock and synchronous active-high reset' });
  m.clockDomain('sync', clk, rst);

  const link = (child: Module, port: string) => m.wire(`ulpdu_${port.replace(/^m_axis_/, '')}`, child.ports.find((x) => x.name === port)!.width);

  // mpa_rx: configuration and TCP payload from outside; ULPDUs and the verdict to ddp_rx.
  const ulpdu: Record<string, Signal> = {};
  for (const p of ['m_axis_tdata', 'm_axis_tkeep', 'm_axis_tvalid', 'm_axis_tready', 'm_axis_tlast', 'm_axis_tuser']) ulpdu[p] = link(mpa, p);
  const errCode = m.wire('mpa_err_code_w', 8);
  const mpaIdle = m.wire('mpa_idle', 1, { doc: 'mpa_rx has nothing it can do without more input' });
  const mpaConns: Record<string, Signal> = { clk, rst, ...ulpdu, err_code: errCode, idle: mpaIdle };
  for (const p of mpa.ports) {
    if (p.name in mpaConns) continue;
    const name = p.name.startsWith('cfg_') ? `mpa_${p.name}` : p.name.startsWith('s_axis_') ? p.name : `mpa_${p.name}`;
    mpaConns[p.name] = m.portLike(mpa, p.name, name, p.name.startsWith('s_axis_') ? 'AXI4-Stream input: in-order TCP payload (s_axis)' : 'MPA receive (mpa_rx)');
  }
  const mpaErr = m.output('mpa_err_code', 8, { group: 'MPA receive (mpa_rx)', doc: "the LLP error code of the first failed FPDU" });
  m.assign(mpaErr, errCode);
  m.instance(mpa, 'u_mpa_rx', mpaConns);

  // ddp_rx: its ULPDU input from mpa_rx; everything else from and to outside.
  const rxConns: Record<string, Signal> = {
    clk,
    rst,
    s_axis_tdata: ulpdu.m_axis_tdata!,
    s_axis_tkeep: ulpdu.m_axis_tkeep!,
    s_axis_tvalid: ulpdu.m_axis_tvalid!,
    s_axis_tready: ulpdu.m_axis_tready!,
    s_axis_tlast: ulpdu.m_axis_tlast!,
    s_axis_tuser: ulpdu.m_axis_tuser!,
    s_llp_err: errCode,
  };
  // idle and rx_idle cover mpa_rx too: an FPDU between the two is still being received.
  for (const name of ['idle', 'rx_idle']) {
    const inner = (rxConns[name] = m.wire(`ddp_${name}`, 1));
    m.assign(m.portLike(rx, name), inner.and(mpaIdle));
  }
  for (const p of rx.ports) if (!(p.name in rxConns)) rxConns[p.name] = m.portLike(rx, p.name);
  m.instance(rx, 'u_ddp_rx', rxConns);
  return m.build();
}
