/**
 * The contract between the generated addon (wrapper-gen.ts) and TypeScript, and loading it.
 */
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { WRAPPER_VERSION } from './wrapper-gen';
import type { PortSpec } from './port-spec';

/** One model instance; every method operates on the shared buffer given to `create`. */
export interface NativeInstance {
  eval(): void;
  tick(n: number): void;
  /** Takes a deferred rising edge, if one is pending, and publishes the post-edge outputs. */
  commit(): void;
  cycles(): number;
  /** Opens a waveform that dumps cycles [from, to) (default: from now on; `to` < 0: no end). */
  traceOn(path: string, from?: number, to?: number): void;
  traceOff(): void;
  /** Runs `final` blocks and closes the trace; later calls except `finish` throw. */
  finish(): void;
}

export interface NativeAddon {
  /** `plusargs` ("+NAME=value") reach $test$plusargs and $value$plusargs in the model's initial blocks. */
  create(buffer: ArrayBuffer, plusargs?: readonly string[]): NativeInstance;
  readonly top: string;
  readonly portsJson: string;
  readonly totalWords: number;
  readonly wrapperVersion: number;
  readonly trace: boolean;
  /** 'vcd' or 'fst' when built with trace. */
  readonly traceFormat?: 'vcd' | 'fst';
}

const require = createRequire(import.meta.url);

export function loadAddon(file: string): { addon: NativeAddon; ports: PortSpec[] } {
  // The buffer is addressed as bytes by TypeScript and as uint32 words by C++: they agree only on
  // a little-endian host, which is every platform Node runs Verilator on today.
  if (endianness() !== 'LE') throw new Error('the Verilator bridge needs a little-endian host');
  const addon = require(file) as NativeAddon;
  if (addon.wrapperVersion !== WRAPPER_VERSION) {
    throw new Error(`${file} was built by wrapper version ${addon.wrapperVersion}, this bridge is version ${WRAPPER_VERSION}: rebuild it with buildModel`);
  }
  return { addon, ports: JSON.parse(addon.portsJson) as PortSpec[] };
}
