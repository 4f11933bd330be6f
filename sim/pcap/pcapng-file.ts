import { LINKTYPE_ETHERNET, PCAP_SNAPLEN } from './pcap-file';

/**
 * pcapng capture file (IETF draft draft-ietf-opsawg-pcapng, "PCAP Next Generation (pcapng) Capture
 * File Format"), the part Wireshark/tshark need for a capture with nanosecond timestamps and
 * per-packet comments: one Section Header Block (§4.1), one Interface Description Block (§4.2) of an
 * Ethernet interface with if_tsresol = 9, and one Enhanced Packet Block (§4.3) per frame, its
 * opt_comment (§3.5) shown by Wireshark as the packet comment (`frame.comment`). Written
 * little-endian: a reader tells the byte order from the Byte-Order Magic. Pure: the caller writes
 * `bytes()` wherever it wants.
 */

/** Block Type codes (§4.1, §4.2, §4.3); the SHB's reads the same in either byte order. */
export const PcapngBlock = Object.freeze({ SHB: 0x0a0d0d0a, IDB: 0x00000001, EPB: 0x00000006 });
/** SHB Byte-Order Magic (§4.1): 0x1A2B3C4D in the writer's byte order. */
export const PCAPNG_BYTE_ORDER_MAGIC = 0x1a2b3c4d;
export const PCAPNG_VERSION_MAJOR = 1;
export const PCAPNG_VERSION_MINOR = 0;
/** SHB Section Length -1: not given (§4.1), so the writer need not know it before the packets. */
const SECTION_LENGTH_UNSPECIFIED = -1n;

/** Option codes: common ones (§3.5), then per block (shb_userappl §4.1, if_tsresol §4.2). */
export const PcapngOption = Object.freeze({ END_OF_OPT: 0, COMMENT: 1, SHB_USERAPPL: 4, IF_TSRESOL: 9 });
/** if_tsresol with the high bit clear is a power of ten: 9 means timestamps count nanoseconds. */
export const TSRESOL_NANOSECONDS = 9;

/** Every block and option value is padded to 32 bits (§3.1, §3.5). */
const ALIGN = 4;
/** Block Type and Block Total Length before the body, Block Total Length again after it (§3.1). */
const BLOCK_OVERHEAD = 12;
const OPTION_HEADER_SIZE = 4;
/** Option Length is 16 bits (§3.5). */
const MAX_OPTION_LENGTH = 0xffff;

const padded = (n: number): number => (n + ALIGN - 1) & ~(ALIGN - 1);
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Option {
  readonly code: number;
  readonly value: Uint8Array;
}

/** An option list (§3.5): code, length, value padded to 32 bits; opt_endofopt after the last. */
function optionsBytes(options: readonly Option[]): Uint8Array {
  if (!options.length) return new Uint8Array(0);
  const size = options.reduce((n, o) => n + OPTION_HEADER_SIZE + padded(o.value.length), OPTION_HEADER_SIZE);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const o of options) {
    if (o.value.length > MAX_OPTION_LENGTH) throw new RangeError(`pcapng option ${o.code} of ${o.value.length} octets exceeds ${MAX_OPTION_LENGTH}`);
    view.setUint16(at, o.code, true);
    view.setUint16(at + 2, o.value.length, true);
    out.set(o.value, at + OPTION_HEADER_SIZE);
    at += OPTION_HEADER_SIZE + padded(o.value.length);
  }
  // opt_endofopt: code 0, length 0; the buffer is already zero there.
  return out;
}

/** One block (§3.1): type, total length, the body (fixed part, then options), total length. */
function block(type: number, fixed: Uint8Array, options: readonly Option[] = []): Uint8Array {
  const opts = optionsBytes(options);
  const total = BLOCK_OVERHEAD + padded(fixed.length) + opts.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, type, true);
  view.setUint32(4, total, true);
  out.set(fixed, 8);
  out.set(opts, 8 + padded(fixed.length));
  view.setUint32(total - 4, total, true);
  return out;
}

export interface PcapngOptions {
  /** The section's comment (SHB opt_comment): what the capture is. */
  readonly comment?: string;
  /** The application that wrote it (shb_userappl). */
  readonly application?: string;
}

/** Frames on one Ethernet interface, each with a timestamp in nanoseconds since the Unix epoch. */
export class PcapngFile {
  private readonly blocks: Uint8Array[] = [];
  private count = 0;

  constructor(options: PcapngOptions = {}) {
    // SHB (§4.1): Byte-Order Magic, Major, Minor, Section Length; then its options.
    const shb = new Uint8Array(16);
    const sv = new DataView(shb.buffer);
    sv.setUint32(0, PCAPNG_BYTE_ORDER_MAGIC, true);
    sv.setUint16(4, PCAPNG_VERSION_MAJOR, true);
    sv.setUint16(6, PCAPNG_VERSION_MINOR, true);
    sv.setBigInt64(8, SECTION_LENGTH_UNSPECIFIED, true);
    const shbOptions: Option[] = [];
    if (options.comment !== undefined) shbOptions.push({ code: PcapngOption.COMMENT, value: utf8(options.comment) });
    if (options.application !== undefined) shbOptions.push({ code: PcapngOption.SHB_USERAPPL, value: utf8(options.application) });
    this.blocks.push(block(PcapngBlock.SHB, shb, shbOptions));
    // IDB (§4.2): LinkType, Reserved, SnapLen; if_tsresol so every EPB timestamp counts nanoseconds.
    const idb = new Uint8Array(8);
    const iv = new DataView(idb.buffer);
    iv.setUint16(0, LINKTYPE_ETHERNET, true);
    iv.setUint32(4, PCAP_SNAPLEN, true);
    this.blocks.push(block(PcapngBlock.IDB, idb, [{ code: PcapngOption.IF_TSRESOL, value: Uint8Array.of(TSRESOL_NANOSECONDS) }]));
  }

  /** Appends one frame captured at `timestampNs` (nanoseconds since the Unix epoch), with an optional comment. */
  add(frame: Uint8Array, timestampNs: bigint, comment?: string): void {
    if (timestampNs < 0n || timestampNs > 0xffff_ffff_ffff_ffffn) throw new RangeError(`pcapng timestamp must fit 64 unsigned bits, got ${timestampNs}`);
    if (frame.length > PCAP_SNAPLEN) throw new RangeError(`frame of ${frame.length} octets is longer than the snaplen ${PCAP_SNAPLEN}`);
    // EPB (§4.3): Interface ID 0, Timestamp (high and low 32 bits), Captured and Original Packet
    // Length (nothing is truncated), the frame padded to 32 bits.
    const fixed = new Uint8Array(20 + padded(frame.length));
    const v = new DataView(fixed.buffer);
    v.setUint32(0, 0, true);
    v.setUint32(4, Number(timestampNs >> 32n), true);
    v.setUint32(8, Number(timestampNs & 0xffff_ffffn), true);
    v.setUint32(12, frame.length, true);
    v.setUint32(16, frame.length, true);
    fixed.set(frame, 20);
    this.blocks.push(block(PcapngBlock.EPB, fixed, comment === undefined ? [] : [{ code: PcapngOption.COMMENT, value: utf8(comment) }]));
    this.count++;
  }

  get frameCount(): number {
    return this.count;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.blocks.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of this.blocks) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }
}
