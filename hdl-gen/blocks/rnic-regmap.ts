import { record } from '../lib/record';
import { RegisterMapBuilder, type RegisterMap } from '../lib/regmap';
import { indexBits } from '../lib/ram';
import { QP_CFG } from './records';
import { stagCfgLayout } from './stag-table';

/**
 * The RNIC's AXI4-Lite register map (rnic_cfg_axil, in front of rnic_top's configuration inputs):
 * identification and capabilities, a status word, and two staged ports, a QP's context (QP_CFG,
 * rnic_top's cfg_*) and an STag table entry (stag_cfg_*), each field in a register of its own.
 * The records are the ones the top's ports are declared from, so the map, the RTL and the host's
 * writes cannot disagree. Generated with the RTL as register-map.md and register-map.json.
 */

/** What a map is built for: the generator configuration's width, QPs and STag depth. */
export interface RegMapConfig {
  readonly width: number;
  readonly qps: number;
  readonly stagDepth: number;
}

/** AXI4-Lite byte address bits: a 4 KiB window. */
export const CFG_ADDR_BITS = 12;
/** The ID register's value: "RNIC" in ASCII. */
export const CFG_ID = 0x524e4943;
/** The register map's version: a new major breaks a host driver, a new minor adds registers. */
export const CFG_VERSION = Object.freeze({ major: 1, minor: 0 });

/** Byte offsets of the three blocks of the map. */
export const CFG_BASE = Object.freeze({ global: 0x000, qp: 0x100, stag: 0x200 });

const ID = record('cfg_id', { id: { width: 32, doc: '0x524E4943, "RNIC" in ASCII' } });
const VERSION = record('cfg_version', {
  minor: { width: 16, doc: 'register map minor version: registers added' },
  major: { width: 16, doc: 'register map major version: a change a host driver must know' },
});
const CAP_QPS = record('cfg_cap_qps', { qps: { width: 32, doc: 'QPs the datapath serves: QP_COMMIT takes 0 .. qps - 1' } });
const CAP_STAG_DEPTH = record('cfg_cap_stag_depth', { stag_depth: { width: 32, doc: 'STag table entries: STAG_COMMIT takes indices 0 .. stag_depth - 1' } });
const CAP_WIDTH = record('cfg_cap_width', { octets: { width: 8, doc: 'datapath octets per beat (AXI4-Stream tdata / 8)' } });

/** The status word: each port's commit in flight, and whether the top takes one now. */
export const CFG_STATUS = record('cfg_status', {
  qp_busy: { width: 1, doc: 'a QP context is committed and not yet taken (cfg_valid): writes to QP_* wait' },
  stag_busy: { width: 1, doc: 'an STag entry is committed and not yet taken (stag_cfg_valid): writes to STAG_* wait' },
  qp_ready: { width: 1, doc: "rnic_top's cfg_ready: 0 through the init sweeps after reset" },
  stag_ready: { width: 1, doc: "rnic_top's stag_cfg_ready: 0 through the STag table's init sweep after reset" },
});

/** The commit register of the QP port: the QP number. */
export const qpCommitLayout = (qps: number) => record('qp_commit', { qp: { width: indexBits(qps), doc: 'the QP whose context the staged fields become (a new connection)' } });

/** The commit register of the STag port: the STag, key in the low octet, index above (RFC 5040 STag = index << 8 | key). */
export const stagCommitLayout = (stagDepth: number) => {
  const layout = stagCfgLayout(stagDepth);
  return record('stag_commit', {
    key: { width: layout.field('key').width, doc: 'STag key', ref: layout.field('key').ref ?? undefined },
    index: { width: layout.field('index').width, doc: 'STag index: the table entry written', ref: layout.field('index').ref ?? undefined },
  });
};

export function rnicRegisterMap(c: RegMapConfig): RegisterMap {
  const b = new RegisterMapBuilder(
    'rnic_cfg',
    'Configuration of rnic_top over AXI4-Lite: a QP context and an STag entry are staged field by field, then committed.',
    CFG_ADDR_BITS,
    CFG_VERSION,
  );
  const g = CFG_BASE.global;
  b.constant('ID', g + 0x00, ID, { id: CFG_ID }, 'identifies the block');
  b.constant('VERSION', g + 0x04, VERSION, CFG_VERSION, 'version of this register map');
  b.constant('CAP_QPS', g + 0x08, CAP_QPS, { qps: c.qps }, 'capability: QPs');
  b.constant('CAP_STAG_DEPTH', g + 0x0c, CAP_STAG_DEPTH, { stag_depth: c.stagDepth }, 'capability: STag table entries');
  b.constant('CAP_WIDTH', g + 0x10, CAP_WIDTH, { octets: c.width }, 'capability: datapath width');
  b.statusWord('STATUS', g + 0x14, CFG_STATUS, 'commits in flight and the top\u2019s readiness');
  b.port({
    name: 'qp',
    prefix: 'cfg',
    base: CFG_BASE.qp,
    layout: QP_CFG,
    commit: qpCommitLayout(c.qps),
    limit: BigInt(c.qps),
    doc: 'Writing a QP number loads the staged QP_* fields into that QP (cfg_valid until cfg_ready): a new connection. A QP number >= CAP_QPS is refused (SLVERR).',
  });
  b.port({
    name: 'stag',
    prefix: 'stag_cfg',
    base: CFG_BASE.stag,
    layout: stagCfgLayout(c.stagDepth),
    commit: stagCommitLayout(c.stagDepth),
    limit: BigInt(c.stagDepth) << 8n,
    doc: 'Writing an STag writes the staged STAG_* fields into its table entry (stag_cfg_valid until stag_cfg_ready). An STag whose index is >= CAP_STAG_DEPTH is refused (SLVERR).',
  });
  return b.build();
}
