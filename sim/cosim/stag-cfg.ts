import { STAG_RIGHT_BITS } from '../../hdl-gen/blocks/stag-table';
import { stagIndex, stagKey } from '../../ts-model/memory/stag';
import type { RtlRegion } from './rx-peer';

/**
 * One STag table entry as the `stag_cfg_*` write port takes it (hdl-gen/blocks/stag-table.ts, as
 * ddp_rx, rnic_rx and rnic_top carry it): index and key, PD, base, length, rights, addressing,
 * invalidatable, and enabled (`enable: false` deregisters the entry). The port is valid/ready
 * (stag_cfg_ready: 0 through the table's init sweep after reset and for a cycle while an
 * invalidate clears its entry), so the benches drive it with a RecordSource that holds each entry
 * until it is taken.
 */
export function stagEntry(g: RtlRegion & { readonly enable?: boolean }) {
  return {
    index: stagIndex(g.stag),
    key: stagKey(g.stag),
    pd: g.pd,
    base: g.base,
    length: g.length,
    access: STAG_RIGHT_BITS.reduce((acc, name, i) => acc | (g.access.includes(name) ? 1 << i : 0), 0),
    va: g.va,
    invalidatable: g.invalidatable,
    enable: g.enable ?? true,
  };
}
