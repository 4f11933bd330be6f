import { z } from 'zod';
import { AccessRightSchema, type AccessRight } from './access';
import { ADDRESS_SPACE } from './host-memory';
import { MAX_STAG, stagIndex, stagKey } from './stag';

/** Tagged Offsets are 64 bits (RFC 5041 §4.1); a TO range may not pass 2^64 (T4). */
export const TO_SPACE = 1n << 64n;

/**
 * How a region's Tagged Offsets map to host addresses (RFC 5040 §2, RFC 5042 §5.1): zero-based,
 * TO 0 is the region's first octet; 'va', the TO of the first octet is its host address.
 */
export const ADDRESSING_MODES = ['zero-based', 'va'] as const;
export type Addressing = (typeof ADDRESSING_MODES)[number];

/** What the consumer registers. A bad field raises a ZodError whose path names it. */
export const RegionSpecSchema = z
  .object({
    stag: z.number().int().min(0).max(MAX_STAG),
    /** Protection domain: a region serves only streams (QPs) of the same PD (RFC 5042 §5.1). */
    pd: z.number().int().min(0).default(0),
    /** Host address of the region's first octet. */
    base: z.bigint().min(0n).default(0n),
    /** Octets; an empty region would have no first octet for T5 to measure against. */
    length: z.bigint().min(1n),
    access: z.array(AccessRightSchema),
    addressing: z.enum(ADDRESSING_MODES).default('zero-based'),
    /** Whether Send with Invalidate may invalidate it (RFC 5040 §5.5, spec/ddp-rdmap.md §5.5). */
    invalidatable: z.boolean().default(true),
  })
  .strict()
  .refine((s) => s.base + s.length <= ADDRESS_SPACE, {
    path: ['length'],
    message: 'base + length must not exceed 2^64',
  });

export type RegionSpec = z.input<typeof RegionSpecSchema>;

export interface Region {
  readonly stag: number;
  readonly pd: number;
  readonly base: bigint;
  readonly length: bigint;
  readonly access: ReadonlySet<AccessRight>;
  readonly addressing: Addressing;
  /** False once invalidated; the record stays so that later uses report Invalid STag. */
  readonly valid: boolean;
  readonly invalidatable: boolean;
}

/**
 * Tagged buffer checks T1–T5 (spec/ddp-rdmap.md §5.3) and the Read Request / atomic source
 * checks (§5.5; spec/rdmap-extensions.md §7 A5–A8), named independently of the layer so the
 * caller maps them to DDP (Layer 1) or RDMAP (Layer 0) codes (spec/ddp-rdmap.md §9).
 */
export type TaggedFault = 'invalid-stag' | 'pd-mismatch' | 'access' | 'to-wrap' | 'bounds';

export type TaggedCheck =
  | { readonly ok: true; readonly region: Region; readonly address: bigint }
  | { readonly ok: false; readonly fault: TaggedFault };

/** Send with Invalidate checks (RFC 5040 §5.5; spec/ddp-rdmap.md §5.5), in that order. */
export type InvalidateFault = 'invalid-stag' | 'pd-mismatch' | 'not-invalidatable';

export type InvalidateResult = { readonly ok: true } | { readonly ok: false; readonly fault: InvalidateFault };

/** The TO of a region's first octet. */
export function firstTaggedOffset(region: Region): bigint {
  return region.addressing === 'va' ? region.base : 0n;
}

/** The STag table of one RNIC, shared by all its streams; indexed by the 24-bit STag index. */
export class StagTable {
  readonly #byIndex = new Map<number, Region>();

  /** Registers a region; refuses an index already in the table (even an invalidated one). */
  register(spec: RegionSpec): Region {
    const s = RegionSpecSchema.parse(spec);
    const index = stagIndex(s.stag);
    if (this.#byIndex.has(index)) {
      throw new Error(`STag index 0x${index.toString(16)} is already registered (STag 0x${s.stag.toString(16)})`);
    }
    const region: Region = Object.freeze({
      stag: s.stag,
      pd: s.pd,
      base: s.base,
      length: s.length,
      access: new Set(s.access) as ReadonlySet<AccessRight>,
      addressing: s.addressing,
      valid: true,
      invalidatable: s.invalidatable,
    });
    this.#byIndex.set(index, region);
    return region;
  }

  /** The region the STag names, if index and key both match (valid or not). */
  lookup(stag: number): Region | undefined {
    const region = this.#byIndex.get(stagIndex(stag));
    return region !== undefined && stagKey(region.stag) === stagKey(stag) ? region : undefined;
  }

  /**
   * Checks an access of `length` octets at `to` and translates it to a host address. The order
   * is the project's (spec/ddp-rdmap.md §5.3: RFC 5041 §7.1 does not rank the checks); the first
   * failure is returned. Zero-length accesses are checked too: callers skip them where
   * RFC 5041 §5.2 says STag and TO MUST NOT be checked (spec/ddp-rdmap.md §5.4).
   */
  check(stag: number, to: bigint, length: number | bigint, pd: number, right: AccessRight): TaggedCheck {
    if (to < 0n || to >= TO_SPACE) throw new RangeError(`TO ${to} is not a 64-bit value`);
    const len = BigInt(length);
    if (len < 0n) throw new RangeError(`access length ${length} is negative`);

    const region = this.lookup(stag);
    // T1: registered, key matches, not invalidated.
    if (region === undefined || !region.valid) return { ok: false, fault: 'invalid-stag' };
    // T2: the STag belongs to this stream's protection domain.
    if (region.pd !== pd) return { ok: false, fault: 'pd-mismatch' };
    // T3: the region grants the right the operation needs.
    if (!region.access.has(right)) return { ok: false, fault: 'access' };
    // T4: the TO range must not pass the top of the 64-bit TO space.
    if (to + len > TO_SPACE) return { ok: false, fault: 'to-wrap' };
    // T5: [to, to + len) inside the region, at octet granularity. For len ≥ 1 this is "TO and
    // TO + len − 1 inside"; an empty access may sit anywhere from the first octet to one past the last.
    const first = firstTaggedOffset(region);
    if (to < first || to + len > first + region.length) return { ok: false, fault: 'bounds' };
    return { ok: true, region, address: region.base + (to - first) };
  }

  /** Send with Invalidate (RFC 5040 §5.5): invalidates the STag if allowed; the first failure otherwise. */
  invalidate(stag: number, pd: number): InvalidateResult {
    const region = this.lookup(stag);
    if (region === undefined || !region.valid) return { ok: false, fault: 'invalid-stag' };
    if (region.pd !== pd) return { ok: false, fault: 'pd-mismatch' };
    if (!region.invalidatable) return { ok: false, fault: 'not-invalidatable' };
    this.#byIndex.set(stagIndex(stag), Object.freeze({ ...region, valid: false }));
    return { ok: true };
  }

  /** Every region, valid or not, in STag index order (deterministic, for digests). */
  regions(): readonly Region[] {
    return [...this.#byIndex.entries()].sort(([a], [b]) => a - b).map(([, region]) => region);
  }
}
