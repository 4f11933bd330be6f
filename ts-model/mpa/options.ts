import { z } from 'zod';
import { MAX_ULPDU_LENGTH } from './constants';

/**
 * The MPA interpretation points the spec leaves open, with the project defaults
 * (spec/README.md, "Open interpretation points", #1–#7). The RTL implements the defaults.
 */
export const MpaOptionsSchema = z
  .object({
    /** #1: a marker at an FPDU boundary is covered by the following FPDU's CRC (spec/mpa.md §4.6). */
    leadMarkerInCrc: z.boolean().default(true),
    /**
     * #2: what FPDUPTR points at: the FPDU's ULPDU_Length octet (RFC 5044, Wireshark, siw) or,
     * pre-RFC OSC legacy, the FPDU's first wire octet including a leading marker (spec/mpa.md §4.4).
     */
    fpduptrRef: z.enum(['ulpduLength', 'fpduStart']).default('ulpduLength'),
    /** #3: MULPDU with markers off keeps the marker term ('rfc') or drops it (spec/mpa.md §5). */
    mulpduMode: z.enum(['rfc', 'noMarkerTerm']).default('rfc'),
    /** #4: check every marker on in-order data (spec/mpa.md §4.8). */
    checkMarkers: z.boolean().default(true),
    /** #5: discard an FPDU with a CRC or marker error for TCP to retransmit, instead of reporting it. */
    silentDropOnCrcError: z.boolean().default(false),
    /** #7: the largest ULPDU_Length accepted; above it 2/0/0x03 before the CRC (spec/mpa.md §6). */
    maxUlpduLength: z.number().int().min(0).max(MAX_ULPDU_LENGTH).default(MAX_ULPDU_LENGTH),
  })
  .strict();

export type MpaOptions = z.infer<typeof MpaOptionsSchema>;
export type MpaOptionsInput = z.input<typeof MpaOptionsSchema>;

export const DEFAULT_MPA_OPTIONS: MpaOptions = Object.freeze(MpaOptionsSchema.parse({}));

/** Validates user-supplied options; a bad field raises a ZodError that names it. */
export function mpaOptions(input: MpaOptionsInput = {}): MpaOptions {
  return Object.freeze(MpaOptionsSchema.parse(input));
}
