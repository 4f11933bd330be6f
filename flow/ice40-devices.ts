/**
 * The iCE40 parts this flow places on: nextpnr-ice40's device flag and the package. The default
 * is the HX8K in the CT256 package (the iCE40-HX8K breakout board), the largest HX part.
 */

export interface Ice40Device {
  /** nextpnr-ice40's device option, e.g. `--hx8k`. */
  flag: string;
  package: string;
}

export const ICE40_DEVICES = Object.freeze({
  hx1k: { flag: '--hx1k', package: 'tq144' },
  hx4k: { flag: '--hx4k', package: 'tq144' },
  hx8k: { flag: '--hx8k', package: 'ct256' },
  up5k: { flag: '--up5k', package: 'sg48' },
} satisfies Record<string, Ice40Device>);

export type Ice40DeviceName = keyof typeof ICE40_DEVICES;

export const DEFAULT_ICE40_DEVICE: Ice40DeviceName = 'hx8k';

/** "hx8k-ct256": how results name the part. */
export function deviceLabel(name: Ice40DeviceName): string {
  return `${name}-${ICE40_DEVICES[name].package}`;
}
