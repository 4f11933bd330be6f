import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32cModule } from '../blocks/crc32c';
import type { DdpRxOptions } from '../blocks/ddp-rx';
import { rnicRegisterMap } from '../blocks/rnic-regmap';
import { rnicTopAxilModule } from '../blocks/rnic-top-axil';
import { withDescendants } from '../core/hierarchy';
import type { Module } from '../core/module';
import { emitVerilog } from '../emit/verilog';
import { configHash, type RnicConfig } from './config';
import { integrationFiles } from './constraints';
import { registerMapJson, registerMapMarkdown, type RegisterMapContext } from './register-map-doc';

export const GENERATOR_VERSION = '0.1.0';
export const REGENERATE = 'make rtl (rnic gen --out rtl)';

export interface PortInfo {
  readonly name: string;
  readonly direction: 'input' | 'output';
  readonly width: number;
  readonly group: string | null;
  /** A port that carries a record: its layout (hdl-gen/lib/record.ts), fields least significant first. */
  readonly record?: { readonly name: string; readonly fields: readonly { readonly name: string; readonly lo: number; readonly width: number }[] };
}

export interface ModuleInfo {
  readonly name: string;
  readonly file: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly ports: readonly PortInfo[];
}

export interface Manifest {
  readonly generator: string;
  readonly version: string;
  readonly configHash: string;
  readonly config: RnicConfig;
  readonly top: string;
  readonly modules: readonly ModuleInfo[];
}

export interface GeneratedFile {
  readonly path: string;
  readonly text: string;
}

/** The table and queue depths of a configuration, as the receive path's blocks take them. */
export function datapathOptions(c: RnicConfig): DdpRxOptions {
  return { stagDepth: c.stagDepth, irrqDepth: c.irrqDepth, orqDepth: c.orqDepth, rqDepth: c.rqDepth };
}

/**
 * The modules of a configuration, children before parents: the CRC block, and the integrator's
 * top `rnic_top_axil_w<W>` (rnic_top_w<W> for config.qps QPs, configured over AXI4-Lite) with
 * everything it instantiates, last: the top of the filelist.
 */
export function modulesFor(config: RnicConfig): Module[] {
  const top = rnicTopAxilModule(config.width, config.qps, datapathOptions(config), config.memory);
  return [crc32cModule(config.width), ...withDescendants(top)];
}

/** The register map's documentation files (register-map.md, register-map.json) for `config`. */
export function registerMapFiles(config: RnicConfig, modules: readonly Module[] = modulesFor(config)): GeneratedFile[] {
  const block = modules.find((m) => m.name.startsWith('rnic_cfg_axil_'));
  if (!block) throw new Error('internal: no rnic_cfg_axil module in the configuration');
  const map = rnicRegisterMap(config);
  const ctx: RegisterMapContext = { width: config.width, qps: config.qps, stagDepth: config.stagDepth, regenerate: REGENERATE, module: block.name };
  return [
    { path: 'register-map.md', text: registerMapMarkdown(map, ctx) },
    { path: 'register-map.json', text: registerMapJson(map, ctx) },
  ];
}

export function portsOf(m: Module): PortInfo[] {
  return m.ports.map((p) => ({
    name: p.name,
    direction: p.role === 'input' ? 'input' : 'output',
    width: p.width,
    group: p.group,
    ...(p.record && { record: { name: p.record.name, fields: p.record.fields.map((f) => ({ name: f.name, lo: f.lo, width: f.width })) } }),
  }));
}

/**
 * Every file `rnic gen` writes, in memory: one .v per module, rnic.f and manifest.json, the
 * integrator's constraints and build scripts (constraints.ts), and the AXI4-Lite register map
 * (register-map.md, register-map.json).
 */
export function generate(config: RnicConfig): GeneratedFile[] {
  const modules = modulesFor(config);
  const files: GeneratedFile[] = modules.map((m) => ({ path: `${m.name}.v`, text: emitVerilog(m, { regenerate: REGENERATE }) }));
  const manifest: Manifest = {
    generator: 'hdl-gen',
    version: GENERATOR_VERSION,
    configHash: configHash(config),
    config,
    top: modules[modules.length - 1]!.name,
    modules: modules.map((m) => ({ name: m.name, file: `${m.name}.v`, params: m.params, ports: portsOf(m) })),
  };
  const sources = modules.map((m) => `${m.name}.v`);
  files.push({ path: 'rnic.f', text: sources.join('\n') + '\n' });
  files.push({ path: 'manifest.json', text: JSON.stringify(manifest, null, 2) + '\n' });
  files.push(...integrationFiles(manifest.modules[manifest.modules.length - 1]!, sources, REGENERATE));
  files.push(...registerMapFiles(config, modules));
  return files;
}

/**
 * Writes the files into `dir`. A module the previous generation wrote there (its rnic.f) and this
 * one does not is removed, so `dir/*.v` never holds a stale module; other files are left alone.
 */
export function writeGenerated(files: readonly GeneratedFile[], dir: string): void {
  mkdirSync(dir, { recursive: true });
  const list = join(dir, 'rnic.f');
  const before = existsSync(list) ? readFileSync(list, 'utf8').split('\n').filter((l) => /^\w+\.v$/.test(l)) : [];
  const now = new Set(files.map((f) => f.path));
  for (const old of before) if (!now.has(old)) rmSync(join(dir, old), { force: true });
  for (const f of files) writeFileSync(join(dir, f.path), f.text);
}
