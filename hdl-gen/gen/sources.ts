import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { atomicUnitModule } from '../blocks/atomic-unit';
import { crc32cModule } from '../blocks/crc32c';
import { ddpRxModule } from '../blocks/ddp-rx';
import { rnicRxModule } from '../blocks/rnic-rx';
import { rnicTopModule } from '../blocks/rnic-top';
import { rnicTopAxilModule } from '../blocks/rnic-top-axil';
import { rnicCfgAxilModule } from '../blocks/rnic-cfg-axil';
import { axiMemOptionsOf, rnicAxiMemModule } from '../blocks/rnic-axi-mem';
import { rnicTopAxiMemModule } from '../blocks/rnic-top-axi-mem';
import { ddpRxCtlModule } from '../blocks/ddp-rx-ctl';
import { ddpRxHdrModule } from '../blocks/ddp-rx-hdr';
import { ddpRxPlaceModule } from '../blocks/ddp-rx-place';
import { ddpTxModule } from '../blocks/ddp-tx';
import { mpaRxModule } from '../blocks/mpa-rx';
import { mpaTxModule } from '../blocks/mpa-tx';
import { rdmapTxRespModule } from '../blocks/rdmap-tx-resp';
import { stagTableModule } from '../blocks/stag-table';
import { ulpduReasmModule } from '../blocks/ulpdu-reasm';
import { withDescendants } from '../core/hierarchy';
import type { Module } from '../core/module';
import { emitVerilog } from '../emit/verilog';
import { DEFAULT_CONFIG, type RnicConfig } from './config';
import { REGENERATE, datapathOptions, modulesFor, portsOf, type Manifest, type PortInfo } from './generate';
import { cacheDir } from './paths';
import { RtlError } from './rtl-error';

/** The Verilog files and ports of one module, ready for Verilator or yosys. */
export interface ModuleSources {
  readonly top: string;
  readonly sources: readonly string[];
  readonly ports: readonly PortInfo[];
  /** Where the Verilog came from: 'generated' or the user's --rtl directory. */
  readonly origin: string;
  /** The top module's parameters (the generator's, or manifest.json's for --rtl), e.g. its QPs. */
  readonly params: Readonly<Record<string, string | number | boolean>>;
}

/** Blocks generated at any width or depth: `<name>_w<N>`, `<name>_d<N>` (and `mpa_tx_w<N>_q<Q>`, `mpa_rx_w<N>_q<Q>`, shared by Q QPs). */
const WIDTH_BLOCKS: readonly { readonly pattern: RegExp; readonly build: (width: number, config: RnicConfig, hit: RegExpExecArray) => Module }[] = [
  { pattern: /^crc32c_w(\d+)$/, build: (w) => crc32cModule(w) },
  { pattern: /^mpa_tx_w(\d+)$/, build: (w) => mpaTxModule(w) },
  { pattern: /^mpa_tx_w(\d+)_q(\d+)$/, build: (w, _c, hit) => mpaTxModule(w, { qps: Number(hit[2]) }) },
  { pattern: /^mpa_rx_w(\d+)$/, build: (w) => mpaRxModule(w) },
  { pattern: /^mpa_rx_w(\d+)_q(\d+)$/, build: (w, _c, hit) => mpaRxModule(w, { qps: Number(hit[2]) }) },
  { pattern: /^ddp_rx_hdr_w(\d+)$/, build: (w) => ddpRxHdrModule(w) },
  { pattern: /^ddp_rx_w(\d+)$/, build: (w, c) => ddpRxModule(w, datapathOptions(c)) },
  { pattern: /^rnic_rx_w(\d+)$/, build: (w, c) => rnicRxModule(w, datapathOptions(c)) },
  { pattern: /^rnic_top_w(\d+)$/, build: (w, c) => rnicTopModule(w, c.qps, datapathOptions(c)) },
  { pattern: /^rnic_top_axil_w(\d+)$/, build: (w, c) => rnicTopAxilModule(w, c.qps, datapathOptions(c), c.memory) },
  { pattern: /^rnic_cfg_axil_w(\d+)_q(\d+)_d(\d+)$/, build: (w, _c, hit) => rnicCfgAxilModule({ width: w, qps: Number(hit[2]), stagDepth: Number(hit[3]) }) },
  // The AXI4 memory master (with its non-default options as name tags, rnic-axi-mem.ts) and the top behind it.
  { pattern: /^rnic_axi_mem_w(\d+)((?:_[a-z]\d+)*)$/, build: (w, _c, hit) => rnicAxiMemModule(w, axiMemOptionsOf(hit[2]!)) },
  { pattern: /^rnic_top_axi_mem_w(\d+)((?:_[a-z]\d+)*)$/, build: (w, c, hit) => rnicTopAxiMemModule(w, c.qps, datapathOptions(c), axiMemOptionsOf(hit[2]!)) },
  { pattern: /^ddp_rx_place_w(\d+)$/, build: (w) => ddpRxPlaceModule(w) },
  { pattern: /^ddp_tx_w(\d+)$/, build: (w) => ddpTxModule(w) },
  { pattern: /^ddp_tx_w(\d+)_q(\d+)$/, build: (w, _c, hit) => ddpTxModule(w, { qps: Number(hit[2]) }) },
  { pattern: /^rdmap_tx_resp_w(\d+)_q(\d+)$/, build: (w, _c, hit) => rdmapTxRespModule(w, Number(hit[2])) },
  { pattern: /^ddp_rx_ctl_q(\d+)$/, build: (n, c) => ddpRxCtlModule({ ...datapathOptions(c), qps: n }) },
  { pattern: /^stag_table_d(\d+)$/, build: (d) => stagTableModule(d) },
  { pattern: /^ulpdu_reasm_w(\d+)_q(\d+)$/, build: (w, _c, hit) => ulpduReasmModule(w, { qps: Number(hit[2]) }) },
];

/** Blocks that do not depend on the datapath width. */
const FIXED_BLOCKS: Readonly<Record<string, () => Module>> = { atomic_unit: () => atomicUnitModule() };

/**
 * The modules a name can mean: those of the configuration, plus every block at any width
 * (`crc32c_w<N>`, `mpa_tx_w<N>`), so the widths can be co-simulated and synthesized without a
 * config file.
 */
function lookup(name: string, config: RnicConfig): Module {
  for (const b of WIDTH_BLOCKS) {
    const hit = b.pattern.exec(name);
    if (hit) return b.build(Number(hit[1]), config, hit);
  }
  const fixed = FIXED_BLOCKS[name];
  if (fixed) return fixed();
  const m = modulesFor(config).find((x) => x.name === name);
  if (!m) {
    const families = WIDTH_BLOCKS.map((b) => b.pattern.source.replace(/^\^/, '').replace(/\$$/, '').replace('(\\d+)', '<N>').replace('(\\d+)', '<Q>').replace('(\\d+)', '<D>'));
    throw new Error(`no module '${name}' in the generated RTL (modules: ${modulesFor(config).map((x) => x.name).join(', ')}, ${families.join(', ')})`);
  }
  return m;
}

/**
 * Sources for `module`: from `rtlDir` (its rnic.f; ports from its manifest.json) when given, so
 * users can check hand-edited or tool-processed Verilog; otherwise generated into a content-
 * addressed directory under the cache's gen/ (paths.ts: `<repo>/.cache/gen` in a checkout).
 */
export function moduleSources(module: string, opts: { rtlDir?: string; config?: RnicConfig; cacheRoot?: string } = {}): ModuleSources {
  const config = opts.config ?? DEFAULT_CONFIG;
  if (opts.rtlDir) return fromRtlDir(module, resolve(opts.rtlDir), config);
  const m = lookup(module, config);
  // One file per module, the instantiated ones first (the top module last).
  const files = withDescendants(m).map((x) => ({ name: `${x.name}.v`, text: emitVerilog(x, { regenerate: REGENERATE }) }));
  const hash = createHash('sha256');
  for (const f of files) hash.update(f.text); // each names its module: one file hashes as before
  const dir = join(opts.cacheRoot ?? cacheDir('gen'), `${m.name}-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(dir)) {
    // Write beside and rename, so parallel test processes never read half a file.
    const tmp = `${dir}.tmp-${process.pid}`;
    mkdirSync(tmp, { recursive: true });
    for (const f of files) writeFileSync(join(tmp, f.name), f.text);
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { top: m.name, sources: files.map((f) => join(dir, f.name)), ports: portsOf(m), origin: 'generated', params: m.params };
}

function fromRtlDir(module: string, dir: string, config: RnicConfig): ModuleSources {
  if (!existsSync(dir)) throw new RtlError('missing-file', `--rtl ${dir}: no such directory`);
  const list = join(dir, 'rnic.f');
  if (!existsSync(list)) throw new RtlError('missing-file', `${list}: missing (the filelist rnic gen writes)`);
  const lines = readFileSync(list, 'utf8').split('\n');
  const sources: string[] = [];
  lines.forEach((raw, i) => {
    const l = raw.trim();
    if (!l || l.startsWith('//') || l.startsWith('#')) return;
    const file = resolve(dir, l);
    if (!existsSync(file)) throw new RtlError('missing-file', `${list}:${i + 1}: names ${l}, which does not exist`);
    sources.push(file);
  });
  const manifestFile = join(dir, 'manifest.json');
  let ports: readonly PortInfo[] | undefined;
  let params: Readonly<Record<string, string | number | boolean>> | undefined;
  if (existsSync(manifestFile)) {
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    } catch (e) {
      throw new RtlError('manifest', `${manifestFile}: not valid JSON (${(e as Error).message})`);
    }
    if (!Array.isArray(manifest.modules)) throw new RtlError('manifest', `${manifestFile}: has no "modules" list`);
    const entry = manifest.modules.find((x) => x.name === module);
    ports = entry?.ports;
    params = entry?.params;
  }
  // Without a manifest entry, the generator's own interface for that module is the contract.
  ports ??= portsOf(lookup(module, config));
  params ??= lookup(module, config).params;
  return { top: module, sources, ports, origin: dir, params };
}
