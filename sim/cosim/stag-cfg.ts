import { STAG_RIGHT_BITS } from '../../hdl-gen/blocks/stag-table';
import { stagIndex, stagKey } from '../../ts-model/memory/stag';
import type { PortHandle, SimModel } from '../verilator/model';
import type { RtlRegion } from './rx-peer';

/**
 * Drives one STag table entry onto the `stag_cfg_*` write port (hdl-gen/blocks/stag-table.ts, as
 * ddp_rx, rnic_rx and rnic_top carry it): index and key, PD, base, length, rights, addressing,
 * invalidatable, enabled. The caller owns stag_cfg_valid (a QueueSource).
 */
export function pokeStagEntry(m: SimModel, h: (name: string) => PortHandle, g: RtlRegion): void {
  m.pokeNumber(h('stag_cfg_index'), stagIndex(g.stag));
  m.pokeNumber(h('stag_cfg_key'), stagKey(g.stag));
  m.pokeNumber(h('stag_cfg_pd'), g.pd);
  m.poke(h('stag_cfg_base'), g.base);
  m.poke(h('stag_cfg_length'), g.length);
  m.pokeNumber(h('stag_cfg_access'), STAG_RIGHT_BITS.reduce((acc, name, i) => acc | (g.access.includes(name) ? 1 << i : 0), 0));
  m.pokeNumber(h('stag_cfg_va'), g.va ? 1 : 0);
  m.pokeNumber(h('stag_cfg_invalidatable'), g.invalidatable ? 1 : 0);
  m.pokeNumber(h('stag_cfg_enable'), 1);
}
