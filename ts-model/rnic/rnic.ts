import { HostMemory } from '../memory/host-memory';
import { StagTable } from '../memory/stag-table';
import type { RdmapOptions } from './options';
import { DEFAULT_RDMAP_OPTIONS } from './options';

/**
 * One RNIC: the STag table and the host memory it places into, shared by all its streams. The
 * model runs one event at a time, so every atomic is serialized against the atomics of every
 * other stream of the RNIC, as RFC 7306 §5 requires.
 */
export class Rnic {
  readonly stags = new StagTable();
  readonly memory = new HostMemory();
  private nextFree: bigint;

  /** `firstAddress`: where allocation starts (RNICs sharing one host memory keep apart). */
  constructor(
    readonly name: string,
    readonly options: RdmapOptions = DEFAULT_RDMAP_OPTIONS,
    firstAddress = 0x1000_0000n,
  ) {
    this.nextFree = firstAddress;
  }

  /** Reserves `length` octets of host address space, 4 KiB aligned (for regions and receive buffers). */
  allocate(length: number | bigint): bigint {
    const at = this.nextFree;
    const size = (BigInt(length) + 0xfffn) & ~0xfffn;
    this.nextFree += size === 0n ? 0x1000n : size;
    return at;
  }
}
