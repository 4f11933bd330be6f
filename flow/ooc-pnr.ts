import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deviceLabel, type Ice40DeviceName } from './ice40-devices';
import { netlistPorts } from './netlist-ports';
import { runNextpnr, type Utilisation } from './nextpnr';
import { OOC_PINS, oocWrapper } from './ooc-wrapper';
import { FlowError } from './run-tool';
import { TARGET_PROFILES, classifyCells } from './targets';
import { parseStatJson, runYosys, wrappedScript } from './yosys';

/**
 * iCE40 place-and-route of a module inside its out-of-context wrapper. Every module is wrapped,
 * not only those with too many ports for the package: then Fmax always means the same thing
 * (register to register through the module, input and output paths included) and a module
 * with 20 ports is measured the same way as one with 700. The module is not synthesised again:
 * the wrapper is mapped around the module's own netlist, so what is placed is what was counted
 * (and a large module costs one yosys run, not two).
 */

export interface OocPnrOptions {
  top: string;
  workDir: string;
  /** The module's mapped netlist from its own synthesis: its resolved ports, and what is placed. */
  moduleNetlist: string;
  clock: string;
  reset: string;
  device: Ice40DeviceName;
}

export interface OocPnrResult {
  /** Undefined when the module could not be wrapped, so nothing was placed. */
  fits: boolean | undefined;
  fmaxMHz: number | null;
  utilisation: Record<string, Utilisation>;
  wrapperRegisters: number;
  notes: string[];
}

/** Output files of the wrapped run, relative to the work directory. */
const WRAPPED = Object.freeze({ statJson: 'ooc-stat.json', netlistJson: 'ooc.json' });

export function placeWrapped(o: OocPnrOptions): OocPnrResult {
  const notes: string[] = [];
  const ports = netlistPorts(readFileSync(join(o.workDir, o.moduleNetlist), 'utf8'), o.top);
  let wrapper;
  try {
    wrapper = oocWrapper({ top: o.top, ports, clock: o.clock, reset: o.reset });
  } catch (e) {
    if (!(e instanceof FlowError)) throw e;
    return { fits: undefined, fmaxMHz: null, utilisation: {}, wrapperRegisters: 0, notes: [`not placed: ${e.message}`] };
  }
  const wrapperFile = join(o.workDir, `${wrapper.module}.v`);
  writeFileSync(wrapperFile, wrapper.verilog);
  const script = wrappedScript({ moduleNetlist: o.moduleNetlist, wrapper: wrapperFile, wrapperTop: wrapper.module, outputs: WRAPPED });
  runYosys(script, o.workDir, 'yosys-ooc', wrapper.module, [join(o.workDir, o.moduleNetlist), wrapperFile]);
  const wrappedFfs = wrappedFlipFlops(readFileSync(join(o.workDir, WRAPPED.statJson), 'utf8'), wrapper.module);

  notes.push(
    `Fmax and utilisation are of ${wrapper.module}: ${o.top} between ${wrapper.inputBits} shift-chain input registers and ` +
      `${wrapper.outputBits} output registers XOR-reduced to one pin; the wrapper adds ${wrapper.registers} flip-flops ` +
      `(the wrapped netlist has ${wrappedFfs}); LUT/FF/carry counts are ${o.top}'s own`,
  );
  if (!wrapper.hasClock) notes.push(`${o.top} has no '${o.clock}' port: Fmax is of its combinational paths between the wrapper's registers`);

  const pnr = runNextpnr(o.workDir, WRAPPED.netlistJson, o.device, OOC_PINS.clock);
  if (!pnr.fits) {
    const over = Object.entries(pnr.utilisation).filter(([, u]) => u.used > u.total);
    const needs = over.map(([bel, u]) => `needs ${u.used} ${bel}, has ${u.total}; `).join('');
    notes.push(`does not fit ${deviceLabel(o.device)}: ${needs}${pnr.error ?? 'nextpnr failed'} (log: ${pnr.logFile})`);
  } else if (pnr.fmaxMHz === null) {
    notes.push(`nextpnr reported no Fmax for clock '${OOC_PINS.clock}' (clocks: ${Object.keys(pnr.clocks).join(', ') || 'none'})`);
  }
  const lc = pnr.utilisation.ICESTORM_LC;
  if (lc) notes.push(`wrapped design uses ${lc.used}/${lc.total} ICESTORM_LC on ${deviceLabel(o.device)}`);
  return { fits: pnr.fits, fmaxMHz: pnr.fmaxMHz, utilisation: pnr.utilisation, wrapperRegisters: wrapper.registers, notes };
}

function wrappedFlipFlops(statJson: string, wrapperModule: string): number {
  return classifyCells(TARGET_PROFILES.ice40, parseStatJson(statJson, wrapperModule).cellTypes).ffs;
}
