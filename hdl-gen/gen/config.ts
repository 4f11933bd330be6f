import { createHash } from 'node:crypto';
import { z } from 'zod';
import { RNIC_WIDTHS } from '../blocks/rnic-widths';

/**
 * What `rnic gen` generates the RTL for. Validated by zod: a bad value is an error that names the
 * field.
 */
/** Widths the single blocks are generated at (CRC, MPA, header decode). */
export const BLOCK_WIDTHS = [4, 8, 16, 32, 64] as const;
/** Widths of the RNIC datapath (hdl-gen/blocks/rnic-widths.ts). */
export const DATAPATH_WIDTHS = RNIC_WIDTHS;

/** QPs of the default configuration (issue 17: the shared datapath's size, not a test's). */
export const DEFAULT_QPS = 1024;
/** STag table entries of the default configuration: four regions per QP. */
export const DEFAULT_STAG_DEPTH = 4 * DEFAULT_QPS;

/** A table or queue depth: a power of two in min..max. */
const powerOfTwo = (min: number, max: number, dflt: number) =>
  z
    .number()
    .int()
    .min(min)
    .max(max)
    .refine((n) => (n & (n - 1)) === 0, 'must be a power of two')
    .default(dflt);

/**
 * The clock the datapath is designed for (../shared/design/microarchitecture.md: 250 MHz): the
 * constraints generated with the RTL and the time scale of co-simulation waveforms.
 */
export const TARGET_CLOCK_MHZ = 250;

export const RnicConfigSchema = z
  .object({
    /** Datapath width in octets per cycle (a power of two, 8..64). */
    width: z
      .union(DATAPATH_WIDTHS.map((w) => z.literal(w)) as unknown as [z.ZodLiteral<8>, z.ZodLiteral<16>, ...z.ZodLiteral<number>[]], {
        error: (i) => `must be one of ${DATAPATH_WIDTHS.join(', ')}, got ${JSON.stringify(i.input)}`,
      })
      .default(8),
    /** Queue pairs (RDMAP streams) the datapath serves (every per-QP state in block RAM). */
    qps: z.number().int().min(1).max(16384).default(DEFAULT_QPS),
    /** STag table entries, shared by the QPs (a power of two; hdl-gen/blocks/stag-table.ts). */
    stagDepth: powerOfTwo(16, 65536, DEFAULT_STAG_DEPTH),
    /** Per QP: inbound Read/Atomic Requests held until answered (the IRRQ; an IRD above it waits for room). */
    irrqDepth: powerOfTwo(2, 256, 8),
    /** Per QP: outbound Reads/Atomics outstanding (the ORQ; an ORD above it waits at wr_ready). */
    orqDepth: powerOfTwo(2, 256, 8),
    /** Per QP: posted receive buffers of QN 0 (the RQ). */
    rqDepth: powerOfTwo(2, 256, 16),
    /**
     * Host memory: 'native' (absent, the default) gives the top's mem_wr_* / mem_rd_* ports;
     * 'axi4' puts them behind an AXI4 master (rnic_top_axi_mem_w<W>, hdl-gen/blocks/rnic-axi-mem.ts).
     * Left out of a configuration when native, so the default's hash and manifest stay as they were.
     */
    memory: z.enum(['native', 'axi4']).optional(),
  })
  .strict();

export type RnicConfig = z.infer<typeof RnicConfigSchema>;
export type RnicConfigInput = z.input<typeof RnicConfigSchema>;

export const DEFAULT_CONFIG: RnicConfig = Object.freeze(RnicConfigSchema.parse({}));

export function parseConfig(input: unknown): RnicConfig {
  return RnicConfigSchema.parse(input ?? {});
}

/** A stable hash of the configuration (keys sorted), recorded in the manifest. */
export function configHash(c: RnicConfig): string {
  const canonical = JSON.stringify(Object.fromEntries(Object.entries(c).sort(([a], [b]) => a.localeCompare(b))));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}
