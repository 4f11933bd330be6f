import { z } from 'zod';
import {
  MpaDeframer,
  MpaFramer,
  hex32,
  mulpdu,
  setUpConnection,
  type ConnectionResult,
  type DeframeEvent,
  type FramedFpdu,
} from '../ts-model/mpa';

/**
 * The golden-model demo (the project's main job until co-simulation lands): MPA start-up between
 * two endpoints, then a stream of ULPDUs framed with markers and CRC at their place in TCP
 * sequence space, and the receiver deframing the octets back, cut at arbitrary points.
 */
export const DemoConfigSchema = z
  .object({
    /** Initiator ISN; the default makes the stream cross 2^32. */
    isn: z.number().int().min(0).max(0xffffffff).default(0xfffffb00),
    emss: z.number().int().min(64).max(65535).default(1460),
    markers: z.boolean().default(true),
    crc: z.boolean().default(true),
    /** Drives the payload octets and the receiver's cut points. */
    seed: z.number().int().min(0).max(0xffffffff).default(1),
  })
  .strict();
export type DemoConfig = z.infer<typeof DemoConfigSchema>;

export interface DemoFpdu {
  readonly index: number;
  readonly what: string;
  readonly startSeq: string;
  readonly ulpduLength: number;
  readonly pad: number;
  readonly wireLength: number;
  readonly crc: string;
  readonly markers: readonly { readonly seq: string; readonly fpduptr: number; readonly at: number }[];
  readonly wireHex: string;
}

export interface DemoReport {
  readonly config: DemoConfig;
  readonly connection: {
    readonly status: ConnectionResult['status'];
    readonly requestHex: string;
    readonly replyHex: string;
    readonly s0: string;
    readonly markers: boolean;
    readonly crc: boolean;
    readonly rtr: string | null;
    readonly mulpdu: number;
  };
  readonly fpdus: readonly DemoFpdu[];
  readonly received: { readonly delivered: number; readonly matched: number; readonly chunks: number; readonly errors: readonly string[] };
}

/** A zero-length RDMA Write RTR (RFC 6581 §9.2): tagged, L = 1, STag 1, TO 0 (spec/mpa.md §8.3). */
const RTR_WRITE = Uint8Array.of(0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0);

export function runDemo(input: z.input<typeof DemoConfigSchema> = {}): DemoReport {
  const config = DemoConfigSchema.parse(input);
  const conn = setUpConnection({
    initiatorIsn: config.isn,
    responderIsn: (config.isn ^ 0x5a5a5a5a) >>> 0,
    initiator: { markers: config.markers, crc: config.crc, rtr: ['write'] },
    responder: { markers: config.markers, crc: config.crc, rtr: ['write', 'send', 'read'] },
  });
  const dir = conn.initiatorToResponder;
  const max = mulpdu(config.emss, dir.markers);
  let state = config.seed >>> 0;
  const nextByte = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 24;
  };
  const payload = (n: number) => Uint8Array.from({ length: n }, nextByte);
  const stream: [string, Uint8Array][] = [
    ['RTR: zero-length RDMA Write', RTR_WRITE],
    ['ULPDU of 0 octets', new Uint8Array(0)],
    ['ULPDU of 21 octets (pad 1)', payload(21)],
    ['ULPDU of 1000 octets', payload(1000)],
    [`ULPDU of MULPDU = ${max} octets`, payload(max)],
    ['ULPDU of 508 octets (one marker period)', payload(508)],
    ['ULPDU of 3 octets', payload(3)],
  ];

  const tx = new MpaFramer(dir);
  const framed: FramedFpdu[] = stream.map(([, u]) => tx.frame(u));
  const fpdus = framed.map((f, i) => ({
    index: i,
    what: stream[i]![0],
    startSeq: hex32(f.startSeq),
    ulpduLength: f.ulpduLength,
    pad: f.padLength,
    wireLength: f.wire.length,
    crc: hex32(f.crc),
    markers: f.markers.map((m) => ({ seq: hex32(m.seq), fpduptr: m.fpduptr, at: m.wireOffset })),
    wireHex: Buffer.from(f.wire).toString('hex'),
  }));

  // The receiver gets the same octets cut at pseudo-random points, down to single octets.
  const wire = Buffer.concat(framed.map((f) => f.wire));
  const rx = new MpaDeframer(dir);
  const events: DeframeEvent[] = [];
  let chunks = 0;
  for (let at = 0; at < wire.length; chunks++) {
    const n = Math.min(wire.length - at, 1 + (nextByte() % 97));
    events.push(...rx.push(wire.subarray(at, at + n)));
    at += n;
  }
  events.push(...rx.end());
  const delivered = events.flatMap((e) => (e.kind === 'fpdu' ? [e.ulpdu] : []));
  const matched = delivered.filter((u, i) => Buffer.compare(u, stream[i]![1]) === 0).length;
  return {
    config,
    connection: {
      status: conn.status,
      requestHex: Buffer.from(conn.request.octets).toString('hex'),
      replyHex: conn.reply ? Buffer.from(conn.reply.octets).toString('hex') : '',
      s0: hex32(dir.s0),
      markers: dir.markers,
      crc: dir.crc,
      rtr: conn.rtr,
      mulpdu: max,
    },
    fpdus,
    received: {
      delivered: delivered.length,
      matched,
      chunks,
      errors: events.flatMap((e) => (e.kind === 'fpdu' ? [] : [`${e.kind} 0x${e.code.toString(16)}: ${e.reason}`])),
    },
  };
}

export function formatDemo(r: DemoReport, withHex: boolean): string {
  const c = r.connection;
  const lines = [
    `MPA start-up (RFC 6581 enhanced): ${c.status}`,
    `  Request ${c.requestHex}`,
    `  Reply   ${c.replyHex}`,
    `  initiator -> responder: S0 ${c.s0}, markers ${onOff(c.markers)}, CRC ${onOff(c.crc)}, RTR ${c.rtr ?? 'none'}, MULPDU ${c.mulpdu} (EMSS ${r.config.emss})`,
    '',
    '  #  start seq   ULPDU_Length pad  wire  CRC         markers (seq: FPDUPTR)   what',
  ];
  for (const f of r.fpdus) {
    const markers = f.markers.map((m) => `${m.seq}: ${m.fpduptr}`).join(', ') || '-';
    lines.push(
      `${String(f.index).padStart(3)}  ${f.startSeq}  ${String(f.ulpduLength).padStart(12)} ${String(f.pad).padStart(3)} ${String(f.wireLength).padStart(5)}  ${f.crc}  ${markers.padEnd(24)} ${f.what}`,
    );
    if (withHex) lines.push(hexdump(f.wireHex, '       '));
  }
  const ok = r.received.matched === r.fpdus.length && r.received.errors.length === 0;
  lines.push(
    '',
    `Receiver: ${r.received.delivered} of ${r.fpdus.length} ULPDUs delivered and equal to what was sent, from ${r.received.chunks} chunks; ${
      r.received.errors.length ? r.received.errors.join('; ') : 'no errors'
    } — ${ok ? 'OK' : 'MISMATCH'}`,
  );
  return lines.join('\n');
}

const onOff = (b: boolean) => (b ? 'on' : 'off');

function hexdump(h: string, indent: string): string {
  const rows: string[] = [];
  for (let i = 0; i < h.length; i += 32) rows.push(indent + h.slice(i, i + 32).replace(/(..)/g, '$1 ').trimEnd());
  return rows.join('\n');
}
