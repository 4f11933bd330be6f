import { join } from 'node:path';
import { ICE40_DEVICES, type Ice40DeviceName } from './ice40-devices';
import { errorLines, runTool, toolVersion } from './run-tool';

/**
 * nextpnr-ice40: placing and routing a yosys JSON netlist, and reading the achieved clock
 * frequency and the utilisation back from its log. A design that does not fit (or does not
 * route) is a result with `fits: false` and nextpnr's reason, not an exception.
 */

export const NEXTPNR_ICE40 = process.env.NEXTPNR_ICE40 ?? 'nextpnr-ice40';

/**
 * The frequency nextpnr is asked for: the 12 MHz oscillator of the iCE40 breakout boards. Fmax is
 * what the router achieved, whatever the target; the target only steers timing-driven placement.
 */
export const TARGET_FREQUENCY_MHZ = 12;

/** A fixed placer seed, so the same netlist gives the same Fmax on every run (and the cache is honest). */
export const PLACER_SEED = 1;

export function nextpnrVersion(): string {
  return toolVersion(NEXTPNR_ICE40, '--version');
}

export interface Utilisation {
  used: number;
  total: number;
}

export interface PnrResult {
  fits: boolean;
  /** Achieved Fmax of the chosen clock after routing; null when nextpnr failed or found no clock. */
  fmaxMHz: number | null;
  /** Achieved Fmax of every clock nextpnr timed, by nextpnr's net name (e.g. `clk$SB_IO_IN_$glb_clk`). */
  clocks: Record<string, number>;
  /** nextpnr's "Device utilisation" table: bel type → used / available. */
  utilisation: Record<string, Utilisation>;
  /** nextpnr's first ERROR line when it failed. */
  error?: string;
  logFile: string;
}

/**
 * The command line. `--pcf-allow-unconstrained`: pins are placed freely (there is no board);
 * `--timing-allow-fail`: a design slower than the target is a measurement, not a failure.
 */
export function nextpnrArgs(device: Ice40DeviceName, netlistJson: string, asc: string): string[] {
  const d = ICE40_DEVICES[device];
  return [
    d.flag,
    '--package',
    d.package,
    '--json',
    netlistJson,
    '--asc',
    asc,
    '--freq',
    String(TARGET_FREQUENCY_MHZ),
    '--pcf-allow-unconstrained',
    '--timing-allow-fail',
    '--seed',
    String(PLACER_SEED),
  ];
}

/**
 * Fmax per clock from "Max frequency for clock 'X': F MHz" lines. nextpnr prints them after
 * placement (an estimate) and again after routing; the last line for a clock is the routed one.
 */
export function parseFmax(log: string): Record<string, number> {
  const clocks: Record<string, number> = {};
  for (const m of log.matchAll(/Max frequency for clock '([^']+)': ([\d.]+) MHz/g)) {
    clocks[m[1]!] = Number(m[2]);
  }
  return clocks;
}

/** The "Device utilisation:" block: lines like "Info:          ICESTORM_LC:  1594/ 7680    20%". */
export function parseUtilisation(log: string): Record<string, Utilisation> {
  const out: Record<string, Utilisation> = {};
  const start = log.indexOf('Device utilisation:');
  if (start < 0) return out;
  for (const line of log.slice(start).split('\n').slice(1)) {
    const m = /^Info:\s+(\w+):\s+(\d+)\/\s*(\d+)/.exec(line);
    if (!m) break;
    out[m[1]!] = { used: Number(m[2]), total: Number(m[3]) };
  }
  return out;
}

/**
 * The Fmax of `clockPin`: nextpnr names a clock net after its pin plus suffixes
 * (`clk$SB_IO_IN_$glb_clk`). With one clock in the design that one is taken whatever its name.
 */
export function clockFmax(clocks: Record<string, number>, clockPin: string): number | null {
  const names = Object.keys(clocks);
  const name = names.find((n) => n === clockPin || n.startsWith(`${clockPin}$`)) ?? (names.length === 1 ? names[0] : undefined);
  return name === undefined ? null : (clocks[name] ?? null);
}

/** Places and routes `netlistJson` (in `workDir`) on `device`; the log is `nextpnr.log`. */
export function runNextpnr(workDir: string, netlistJson: string, device: Ice40DeviceName, clockPin: string): PnrResult {
  const run = runTool(NEXTPNR_ICE40, nextpnrArgs(device, netlistJson, 'out.asc'), workDir, join(workDir, 'nextpnr.log'));
  const clocks = parseFmax(run.log);
  const utilisation = parseUtilisation(run.log);
  if (run.status !== 0) {
    const error = errorLines(run.log)[0] ?? `nextpnr-ice40 exited with status ${run.status}`;
    return { fits: false, fmaxMHz: null, clocks: {}, utilisation, error, logFile: run.logFile };
  }
  return { fits: true, fmaxMHz: clockFmax(clocks, clockPin), clocks, utilisation, logFile: run.logFile };
}
