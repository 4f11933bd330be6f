/**
 * The wire layouts of the DDP and RDMAP headers (RFC 5041 §4.2–4.3, RFC 5040 §4.4 and §4.8, RFC 7306
 * §5.2), field by field: octet offset and size, every multi-octet field big-endian. One table
 * each, read by the model's codecs (ddp/header.ts, rdmap/headers.ts) and by the RTL that decodes or
 * builds the same headers (hdl-gen/blocks/ddp-rx-*.ts, ddp-tx-ulpdu.ts, rdmap-tx-resp-ulpdu.ts).
 */
export interface WireField {
  readonly offset: number;
  readonly size: number;
}

export type WireLayout<F extends string> = { readonly [K in F]: WireField } & { readonly SIZE: number };

/** Fields in wire order, each `[name, octets]`: offsets follow from the order. */
function wire<const F extends string>(fields: readonly (readonly [F, number])[]): WireLayout<F> {
  const out: Record<string, WireField | number> = {};
  let at = 0;
  for (const [name, size] of fields) {
    out[name] = Object.freeze({ offset: at, size });
    at += size;
  }
  out.SIZE = at;
  return Object.freeze(out) as WireLayout<F>;
}

/** Tagged DDP header (RFC 5041 §4.2): control, RsvdULP, STag, TO. */
export const DDP_TAGGED = wire([['ctrl', 1], ['rsvd_ulp', 1], ['stag', 4], ['to', 8]]);
/** Untagged DDP header (RFC 5041 §4.3): control, RsvdULP, RsvdULP2 (the Invalidate STag), QN, MSN, MO. */
export const DDP_UNTAGGED = wire([['ctrl', 1], ['rsvd_ulp', 1], ['rsvd_ulp2', 4], ['qn', 4], ['msn', 4], ['mo', 4]]);
/** RDMA Read Request header (RFC 5040 §4.4). */
export const READ_REQUEST = wire([['sink_stag', 4], ['sink_to', 8], ['size', 4], ['src_stag', 4], ['src_to', 8]]);
/** Atomic Request header (RFC 7306 §5.2.1): 28 reserved bits, then AOpCode, in the first word. */
export const ATOMIC_REQUEST = wire([
  ['aopcode_word', 4], ['request_id', 4], ['stag', 4], ['to', 8], ['add_swap', 8], ['add_swap_mask', 8], ['compare', 8], ['compare_mask', 8],
]);
/** Atomic Response header (RFC 7306 §5.2.2): Request Identifier, Original Remote Data Value. */
export const ATOMIC_RESPONSE = wire([['request_id', 4], ['value', 8]]);
/** Immediate Data (RFC 7306 §6). */
export const IMMEDIATE_DATA = wire([['data', 8]]);
/** Terminate header (RFC 5040 §4.8): Layer/EType, Error Code, M/D/R and reserved; then, with D, the DDP Segment Length. */
export const TERMINATE = wire([['layer_etype', 1], ['code', 1], ['flags', 2]]);
export const TERM_SEGMENT_LENGTH = wire([['length', 2]]);
