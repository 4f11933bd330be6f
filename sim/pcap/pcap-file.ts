/**
 * Classic libpcap capture file (the format tcpdump and Wireshark read; IETF draft
 * draft-ietf-opsawg-pcap, "PCAP Capture File Format"): a 24-octet file header, then per frame a
 * 16-octet record header and the frame octets. Written little-endian with microsecond
 * timestamps, so the magic number reads 0xA1B2C3D4 in the writer's byte order. Pure: the caller
 * writes `bytes()` wherever it wants.
 */

/** Magic number for microsecond-resolution timestamps (nanosecond files use 0xA1B23C4D). */
export const PCAP_MAGIC_MICROS = 0xa1b2c3d4;
export const PCAP_VERSION_MAJOR = 2;
export const PCAP_VERSION_MINOR = 4;
/** Largest frame kept whole; 262144 is what tcpdump and Wireshark write today. */
export const PCAP_SNAPLEN = 262144;
/** LINKTYPE_ETHERNET: frames start with an Ethernet II (DIX) header (tcpdump.org link types). */
export const LINKTYPE_ETHERNET = 1;

export const PCAP_FILE_HEADER_SIZE = 24;
export const PCAP_RECORD_HEADER_SIZE = 16;

const MICROS_PER_SECOND = 1_000_000n;

interface PcapRecord {
  readonly seconds: number;
  readonly micros: number;
  readonly frame: Uint8Array;
}

export class PcapFile {
  private readonly records: PcapRecord[] = [];
  private size = PCAP_FILE_HEADER_SIZE;

  /** Appends one frame captured at `timestampMicros` (microseconds since the Unix epoch). */
  add(frame: Uint8Array, timestampMicros: bigint | number): void {
    const t = typeof timestampMicros === 'bigint' ? timestampMicros : BigInt(timestampMicros);
    if (t < 0n) throw new RangeError(`pcap timestamp must not be negative, got ${t}`);
    const seconds = t / MICROS_PER_SECOND;
    if (seconds > 0xffffffffn) throw new RangeError(`pcap timestamp ${t} µs does not fit 32-bit seconds`);
    if (frame.length > PCAP_SNAPLEN) {
      throw new RangeError(`frame of ${frame.length} octets is longer than the snaplen ${PCAP_SNAPLEN}`);
    }
    // Copy: the caller may reuse its buffer (the model carves frames from shared slabs).
    this.records.push({ seconds: Number(seconds), micros: Number(t % MICROS_PER_SECOND), frame: frame.slice() });
    this.size += PCAP_RECORD_HEADER_SIZE + frame.length;
  }

  get frameCount(): number {
    return this.records.length;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    const view = new DataView(out.buffer);
    const le = true;
    view.setUint32(0, PCAP_MAGIC_MICROS, le);
    view.setUint16(4, PCAP_VERSION_MAJOR, le);
    view.setUint16(6, PCAP_VERSION_MINOR, le);
    view.setInt32(8, 0, le); // thiszone: timestamps are UTC
    view.setUint32(12, 0, le); // sigfigs: always 0 in practice
    view.setUint32(16, PCAP_SNAPLEN, le);
    view.setUint32(20, LINKTYPE_ETHERNET, le);
    let at = PCAP_FILE_HEADER_SIZE;
    for (const r of this.records) {
      view.setUint32(at, r.seconds, le);
      view.setUint32(at + 4, r.micros, le);
      view.setUint32(at + 8, r.frame.length, le); // incl_len: nothing is truncated
      view.setUint32(at + 12, r.frame.length, le); // orig_len
      out.set(r.frame, at + PCAP_RECORD_HEADER_SIZE);
      at += PCAP_RECORD_HEADER_SIZE + r.frame.length;
    }
    return out;
  }
}
