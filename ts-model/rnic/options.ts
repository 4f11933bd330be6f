import { z } from 'zod';

/**
 * RDMAP/DDP interpretation points with the project defaults (spec/README.md #10–#23). The RTL
 * implements the defaults.
 */
export const RdmapOptionsSchema = z
  .object({
    /**
     * Accept and send RFC 7306 opcodes 0x8–0xB. Off: received, they are Unexpected OpCode
     * (0x0/0x2/0x06); Immediate Data and Atomic work requests are refused when posted.
     */
    rfc7306: z.boolean().default(true),
    /** #10: Terminate DDP Segment Length = the whole segment (irdma) or its payload (siw). */
    termSegLen: z.enum(['segment', 'payload']).default('segment'),
    /** #18: outstanding atomics count against ORD/IRD with Reads ('shared') or separately. */
    atomicCredits: z.enum(['shared', 'separate']).default('shared'),
    /** With atomicCredits 'separate': the outstanding-atomic limit each way. */
    maxAtomics: z.number().int().min(1).max(0x3fff).default(16),
    /** #19: Immediate Data lands in the completion only ('cqe') or also in the receive buffer. */
    immDataPlacement: z.enum(['cqe', 'buffer']).default('cqe'),
    /** #20: byte order of the atomic target in host memory. */
    hostMemoryEndian: z.enum(['little', 'big']).default('little'),
    /** #23: accept AOpCode 0x1 as the draft-00 Swap. */
    draft00Swap: z.boolean().default(false),
  })
  .strict();

export type RdmapOptions = z.infer<typeof RdmapOptionsSchema>;
export type RdmapOptionsInput = z.input<typeof RdmapOptionsSchema>;
export const DEFAULT_RDMAP_OPTIONS: RdmapOptions = Object.freeze(RdmapOptionsSchema.parse({}));
