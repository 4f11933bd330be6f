import { seqAdd } from '../../ts-model/mpa/sequence';
import { PcapFile } from './pcap-file';

/**
 * Ethernet II / IPv4 / TCP frames for captures that Wireshark decodes as a real TCP connection:
 * a frame builder with correct IPv4 (RFC 791) and TCP (RFC 9293, formerly RFC 793) checksums,
 * and `TcpConversation`, which records one whole connection (handshake, data, close) with the
 * sequence and acknowledgment numbers a lossless peer pair would use, modulo 2^32.
 */

export const ETHERNET_HEADER_SIZE = 14;
export const MAC_SIZE = 6;
/** EtherType for IPv4 (IEEE 802 numbers). */
export const ETHERTYPE_IPV4 = 0x0800;

/** IPv4 header without options: IHL = 5 words (RFC 791 §3.1). */
export const IPV4_HEADER_SIZE = 20;
const IPV4_VERSION_IHL = (4 << 4) | (IPV4_HEADER_SIZE / 4);
/** Don't Fragment, in the flags/fragment-offset word (RFC 791 §3.1). */
export const IPV4_FLAG_DF = 0x4000;
/** Default TTL recommended by RFC 1700 / IANA, and what Linux sends. */
export const IPV4_DEFAULT_TTL = 64;
/** Protocol number for TCP (IANA). */
export const IP_PROTOCOL_TCP = 6;
/** Total Length is 16 bits (RFC 791 §3.1). */
export const IPV4_MAX_TOTAL_LENGTH = 0xffff;

/** TCP header without options: Data Offset = 5 words (RFC 9293 §3.1). */
export const TCP_HEADER_SIZE = 20;
/** Largest window without window scaling (RFC 7323 is not negotiated: SYNs carry no options). */
export const TCP_MAX_WINDOW = 0xffff;
/** Largest TCP payload one IPv4 datagram can carry. */
export const TCP_MAX_PAYLOAD = IPV4_MAX_TOTAL_LENGTH - IPV4_HEADER_SIZE - TCP_HEADER_SIZE;

/** Control bits (RFC 9293 §3.1). */
export const TcpFlag = Object.freeze({
  FIN: 0x01,
  SYN: 0x02,
  RST: 0x04,
  PSH: 0x08,
  ACK: 0x10,
  URG: 0x20,
});

/** RFC 1071 one's-complement sum of 16-bit big-endian words, not yet complemented. */
function onesComplementSum(data: Uint8Array, start: number, end: number, initial = 0): number {
  let sum = initial;
  let i = start;
  for (; i + 1 < end; i += 2) sum += (data[i]! << 8) | data[i + 1]!;
  if (i < end) sum += data[i]! << 8; // an odd octet is padded with zero on the right
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/** The Internet checksum (RFC 1071) of `data[start, end)`, with `initial` as a partial sum. */
export function internetChecksum(data: Uint8Array, start = 0, end = data.length, initial = 0): number {
  return ~onesComplementSum(data, start, end, initial) & 0xffff;
}

export function parseMac(mac: string): Uint8Array {
  const parts = mac.split(':');
  if (parts.length !== MAC_SIZE || parts.some((p) => !/^[0-9a-fA-F]{2}$/.test(p))) {
    throw new RangeError(`not a MAC address (aa:bb:cc:dd:ee:ff): ${mac}`);
  }
  return new Uint8Array(parts.map((p) => parseInt(p, 16)));
}

export const IPV4_ADDRESS_SIZE = 4;

export function parseIpv4(ip: string): Uint8Array {
  const parts = ip.split('.');
  if (parts.length !== IPV4_ADDRESS_SIZE || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 0xff)) {
    throw new RangeError(`not an IPv4 address (a.b.c.d): ${ip}`);
  }
  return new Uint8Array(parts.map(Number));
}

/** Everything one segment's headers need. */
export interface TcpSegmentSpec {
  readonly srcMac: string;
  readonly dstMac: string;
  readonly srcIp: string;
  readonly dstIp: string;
  readonly srcPort: number;
  readonly dstPort: number;
  readonly seq: number;
  readonly ack: number;
  /** OR of `TcpFlag` bits. */
  readonly flags: number;
  readonly ipId: number;
  readonly payload?: Uint8Array;
  readonly window?: number;
  readonly ttl?: number;
}

function checkUint(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${name} must be in [0, ${max}], got ${value}`);
}

/** One Ethernet II frame holding an IPv4 datagram holding one TCP segment; no FCS (as captured). */
export function buildTcpFrame(spec: TcpSegmentSpec): Uint8Array {
  const payload = spec.payload ?? new Uint8Array(0);
  checkUint('TCP payload length', payload.length, TCP_MAX_PAYLOAD);
  checkUint('source port', spec.srcPort, 0xffff);
  checkUint('destination port', spec.dstPort, 0xffff);
  checkUint('sequence number', spec.seq, 0xffffffff);
  checkUint('acknowledgment number', spec.ack, 0xffffffff);
  checkUint('IP identification', spec.ipId, 0xffff);
  const srcIp = parseIpv4(spec.srcIp);
  const dstIp = parseIpv4(spec.dstIp);
  const ipStart = ETHERNET_HEADER_SIZE;
  const tcpStart = ipStart + IPV4_HEADER_SIZE;
  const tcpLength = TCP_HEADER_SIZE + payload.length;
  const frame = new Uint8Array(tcpStart + tcpLength);
  const view = new DataView(frame.buffer);

  frame.set(parseMac(spec.dstMac), 0);
  frame.set(parseMac(spec.srcMac), MAC_SIZE);
  view.setUint16(2 * MAC_SIZE, ETHERTYPE_IPV4);

  // RFC 791 §3.1; TOS 0, checksum computed over the header with its field zero.
  frame[ipStart] = IPV4_VERSION_IHL;
  view.setUint16(ipStart + 2, IPV4_HEADER_SIZE + tcpLength);
  view.setUint16(ipStart + 4, spec.ipId);
  view.setUint16(ipStart + 6, IPV4_FLAG_DF);
  frame[ipStart + 8] = spec.ttl ?? IPV4_DEFAULT_TTL;
  frame[ipStart + 9] = IP_PROTOCOL_TCP;
  frame.set(srcIp, ipStart + 12);
  frame.set(dstIp, ipStart + 16);
  view.setUint16(ipStart + 10, internetChecksum(frame, ipStart, tcpStart));

  // RFC 9293 §3.1; urgent pointer 0.
  view.setUint16(tcpStart, spec.srcPort);
  view.setUint16(tcpStart + 2, spec.dstPort);
  view.setUint32(tcpStart + 4, spec.seq);
  view.setUint32(tcpStart + 8, spec.ack);
  frame[tcpStart + 12] = (TCP_HEADER_SIZE / 4) << 4;
  frame[tcpStart + 13] = spec.flags;
  view.setUint16(tcpStart + 14, spec.window ?? TCP_MAX_WINDOW);
  frame.set(payload, tcpStart + TCP_HEADER_SIZE);
  // The checksum covers the pseudo-header: source, destination, zero, protocol, TCP length.
  const pseudo = new Uint8Array(3 * IPV4_ADDRESS_SIZE);
  pseudo.set(srcIp, 0);
  pseudo.set(dstIp, IPV4_ADDRESS_SIZE);
  pseudo[2 * IPV4_ADDRESS_SIZE + 1] = IP_PROTOCOL_TCP;
  pseudo[2 * IPV4_ADDRESS_SIZE + 2] = tcpLength >>> 8;
  pseudo[2 * IPV4_ADDRESS_SIZE + 3] = tcpLength & 0xff;
  const pseudoSum = onesComplementSum(pseudo, 0, pseudo.length);
  view.setUint16(tcpStart + 16, internetChecksum(frame, tcpStart, frame.length, pseudoSum));
  return frame;
}

export interface TcpEndpoint {
  /** 'aa:bb:cc:dd:ee:ff' */
  readonly mac: string;
  /** 'a.b.c.d' */
  readonly ip: string;
  readonly port: number;
  /** Initial sequence number (32-bit); the SYN occupies it. */
  readonly isn: number;
}

export type TcpSide = 'initiator' | 'responder';

export interface RecordedFrame {
  readonly from: TcpSide;
  readonly frame: Uint8Array;
  readonly seq: number;
  readonly ack: number;
  readonly flags: number;
  readonly payloadLength: number;
}

/** Fixed capture start (2023-11-14T22:13:20Z), so that the same conversation gives the same pcap. */
export const DEFAULT_EPOCH_MICROS = 1_700_000_000_000_000n;
export const DEFAULT_FRAME_SPACING_MICROS = 10n;
/** First IP Identification each host sends; then +1 per datagram (RFC 6864 allows any scheme). */
export const FIRST_IP_ID = 1;

export interface TcpConversationOptions {
  readonly epochMicros?: bigint;
  readonly frameSpacingMicros?: bigint;
}

type Phase = 'idle' | 'established' | 'closed';

interface SideState {
  readonly endpoint: TcpEndpoint;
  /** Sequence number of the next new octet this side sends (RFC 9293 SND.NXT). */
  next: number;
  ipId: number;
}

/**
 * One TCP connection between `initiator` (active open) and `responder`, recorded frame by frame
 * with no loss: every segment acknowledges everything the peer has sent so far.
 */
export class TcpConversation {
  private readonly sides: Record<TcpSide, SideState>;
  private readonly recorded: RecordedFrame[] = [];
  private phase: Phase = 'idle';
  private readonly epoch: bigint;
  private readonly spacing: bigint;

  constructor(
    readonly initiator: TcpEndpoint,
    readonly responder: TcpEndpoint,
    options: TcpConversationOptions = {},
  ) {
    for (const [name, e] of [['initiator', initiator], ['responder', responder]] as const) {
      checkUint(`${name} ISN`, e.isn, 0xffffffff);
      checkUint(`${name} port`, e.port, 0xffff);
      parseMac(e.mac);
      parseIpv4(e.ip);
    }
    this.sides = {
      initiator: { endpoint: initiator, next: initiator.isn, ipId: FIRST_IP_ID },
      responder: { endpoint: responder, next: responder.isn, ipId: FIRST_IP_ID },
    };
    this.epoch = options.epochMicros ?? DEFAULT_EPOCH_MICROS;
    this.spacing = options.frameSpacingMicros ?? DEFAULT_FRAME_SPACING_MICROS;
  }

  /** Sequence number of the next new octet `side` sends (the peer's next expected). */
  nextSeq(side: TcpSide): number {
    return this.sides[side].next;
  }

  /** Three-way handshake (RFC 9293 §3.5): SYN, SYN-ACK, ACK. Each SYN consumes one number. */
  handshake(): void {
    if (this.phase !== 'idle') throw new Error(`handshake() on a ${this.phase} conversation`);
    this.emit('initiator', TcpFlag.SYN, new Uint8Array(0), this.sides.initiator.next, 0, 1);
    this.emit('responder', TcpFlag.SYN | TcpFlag.ACK, new Uint8Array(0), this.sides.responder.next, this.nextSeq('initiator'), 1);
    this.emit('initiator', TcpFlag.ACK, new Uint8Array(0), this.sides.initiator.next, this.nextSeq('responder'), 0);
    this.phase = 'established';
  }

  /**
   * One PSH|ACK segment carrying `payload` from `from`. Without `opts.seq` it carries the next new
   * octets; with it, a retransmission (or reordering) at that sequence number, which leaves
   * `nextSeq` alone.
   */
  send(from: TcpSide, payload: Uint8Array, opts: { seq?: number } = {}): void {
    if (this.phase !== 'established') throw new Error(`send() on a ${this.phase} conversation`);
    const side = this.sides[from];
    if (opts.seq === undefined) {
      this.emit(from, TcpFlag.PSH | TcpFlag.ACK, payload, side.next, this.nextSeq(peer(from)), payload.length);
    } else {
      checkUint('seq', opts.seq, 0xffffffff);
      this.emit(from, TcpFlag.PSH | TcpFlag.ACK, payload, opts.seq, this.nextSeq(peer(from)), 0);
    }
  }

  /** Orderly close (RFC 9293 §3.6): initiator FIN, responder ACK, responder FIN, initiator ACK. */
  close(): void {
    if (this.phase !== 'established') throw new Error(`close() on a ${this.phase} conversation`);
    const fin = TcpFlag.FIN | TcpFlag.ACK;
    this.emit('initiator', fin, new Uint8Array(0), this.sides.initiator.next, this.nextSeq('responder'), 1);
    this.emit('responder', TcpFlag.ACK, new Uint8Array(0), this.sides.responder.next, this.nextSeq('initiator'), 0);
    this.emit('responder', fin, new Uint8Array(0), this.sides.responder.next, this.nextSeq('initiator'), 1);
    this.emit('initiator', TcpFlag.ACK, new Uint8Array(0), this.sides.initiator.next, this.nextSeq('responder'), 0);
    this.phase = 'closed';
  }

  frames(): readonly RecordedFrame[] {
    return this.recorded;
  }

  /** The capture, frame i stamped at epoch + i × spacing. */
  pcap(): Uint8Array {
    const file = new PcapFile();
    this.recorded.forEach((r, i) => file.add(r.frame, this.epoch + BigInt(i) * this.spacing));
    return file.bytes();
  }

  /** Builds and records one segment, then advances the sender's SND.NXT by `consumes`. */
  private emit(from: TcpSide, flags: number, payload: Uint8Array, seq: number, ack: number, consumes: number): void {
    const src = this.sides[from];
    const dst = this.sides[peer(from)].endpoint;
    const frame = buildTcpFrame({
      srcMac: src.endpoint.mac,
      dstMac: dst.mac,
      srcIp: src.endpoint.ip,
      dstIp: dst.ip,
      srcPort: src.endpoint.port,
      dstPort: dst.port,
      seq,
      ack,
      flags,
      ipId: src.ipId,
      payload,
    });
    src.ipId = (src.ipId + 1) & 0xffff;
    src.next = seqAdd(src.next, consumes);
    this.recorded.push({ from, frame, seq, ack, flags, payloadLength: payload.length });
  }
}

const peer = (side: TcpSide): TcpSide => (side === 'initiator' ? 'responder' : 'initiator');
