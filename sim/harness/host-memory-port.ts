import { HostMemory } from '../../ts-model/memory/host-memory';
import type { Prng } from '../../ts-model/util/prng';
import type { Component } from '../cocotb/component';
import type { PauseGen } from '../cocotb/pause';
import type { SimModel } from '../verilator/model';
import type { Memory } from './memory';
import { ReadPortResponder } from './read-port';
import { WritePort, type WriteBeat } from './write-port';

export type { WriteBeat } from './write-port';

export interface HostMemoryPortOptions {
  /** Octets per beat (the datapath width). */
  readonly width: number;
  /** Port name prefix: `${prefix}wr_valid`, `${prefix}rd_valid`, … (default 'mem_'). */
  readonly prefix?: string;
  /** The ports the DUT has (default both). */
  readonly ports?: 'read' | 'write' | 'both';
  /** What the ports read and write (default: an empty HostMemory). */
  readonly memory?: Memory;
  /** Back-pressure: wr_ready and rd_ready held low while these say pause (default never). */
  readonly wrPause?: PauseGen;
  readonly rdPause?: PauseGen;
  /** Read data on the L-th rising edge after the handshake, L uniform in [min, max] (default 1). */
  readonly latency?: { readonly min: number; readonly max: number };
  /** rd_valid and rd_addr are registers: reads answered from the handshake's own cycle on (read-port.ts). */
  readonly registered?: boolean;
  /** Protocol faults go here (default: kept in `faults`, the first 20). */
  readonly report?: (violation: string) => void;
  readonly onWrite?: (beat: WriteBeat, data: Uint8Array) => void;
}

/**
 * Host memory behind a DUT's W-octet memory ports, as one testbench component: writes land at
 * their handshake (per-octet strobes) and are logged, for the protection checks; reads are answered
 * in order after a latency drawn per read (read-port.ts). Back-pressure comes from the pause
 * generators; protocol faults (misaligned address, empty strobe, payload changing under a pending
 * valid) are reported.
 */
export class HostMemoryPort implements Component {
  memory: Memory;
  readonly faults: string[] = [];
  readonly writer: WritePort | null;
  readonly reader: ReadPortResponder | null;

  constructor(model: SimModel, rng: Prng, o: HostMemoryPortOptions) {
    this.memory = o.memory ?? new HostMemory();
    const report = o.report ?? ((v: string) => void (this.faults.length < 20 && this.faults.push(v)));
    const prefix = o.prefix ?? 'mem_';
    const ports = o.ports ?? 'both';
    this.writer =
      ports === 'read'
        ? null
        : new WritePort(model, { width: o.width, prefix, memory: () => this.memory, report, ...(o.wrPause && { pause: o.wrPause }), ...(o.onWrite && { onWrite: o.onWrite }) });
    this.reader =
      ports === 'write'
        ? null
        : new ReadPortResponder(model, rng, {
            width: o.width,
            prefix,
            read: (addr, n) => this.memory.read(addr, n),
            latency: o.latency ?? { min: 1, max: 1 },
            report,
            ...(o.rdPause && { pause: o.rdPause }),
            ...(o.registered && { registered: true }),
          });
  }

  /** Every accepted write beat, in order. */
  get writes(): WriteBeat[] {
    return this.writer?.writes ?? [];
  }

  /** A fresh memory and write log (a new stream); reads in flight are dropped. */
  clear(memory: Memory = new HostMemory()): void {
    this.memory = memory;
    this.writes.length = 0;
    this.reader?.drop();
  }

  /** No read in flight. */
  get idle(): boolean {
    return (this.reader?.inFlight ?? 0) === 0;
  }

  drive(): void {
    this.writer?.drive();
    this.reader?.drive();
  }

  sample(): void {
    this.reader?.sample();
    this.writer?.sample();
  }
}
