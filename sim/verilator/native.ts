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
  /**
   * Up to n cycles with the native channels stepped in each (channels-cpp.ts); stops after the
   * cycle in which channel `stopChannel`'s counter `stopField` (0 items, 1 frames) reaches
   * `stopTarget` (stopChannel -1: never). Returns the cycles run.
   */
  run(n: number, stopChannel?: number, stopField?: number, stopTarget?: number): number;
  /** Opens a channel: config [valid, ready, lastWord, slots, (offset, words)…]; returns its id. */
  channel(source: boolean, config: Uint32Array, status: Float64Array): number;
  /** Appends `ends.length` items (their payload words back to back) to a source's queue. */
  push(id: number, words: Uint32Array, ends: Uint8Array): void;
  /** Sets a channel's pause generator (kind and state as channel.ts encodes them). */
  pause(id: number, kind: number, n: number, i: number, s: number, threshold: number, bits: Uint8Array): void;
  /** A sink's log since the last drain: per item the cycle (two words) and the payload words. */
  drain(id: number): ArrayBuffer;
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
