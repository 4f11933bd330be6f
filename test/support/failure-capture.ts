import { expect } from 'vitest';
import { CAPTURE_HOSTS } from '../../sim/pcap/scenario-pcap';
import { MpaFlag } from '../../ts-model/mpa/constants';
import { IWARP_FIELDS, checkDdpRdmap, fromWire, wiresharkMarkerGap } from './tshark-iwarp';
import { tsharkCrcVerdicts, tsharkFields, type CrcVerdict } from './tshark';

/**
 * A failure capture of `rnic cosim` (sim/cosim/wire-log.ts) as tshark reads it, and the check
 * that Wireshark decodes it as iWARP: the MPA Request and Reply right after the TCP handshake,
 * then every FPDU with the ULPDU length, FPDUPTRs and DDP/RDMAP fields of its wire octets. The
 * expectations come from the capture's octets (S0 and the M and C bits from the Request and Reply
 * frames), not from the writer's bookkeeping.
 */

export type CaptureSide = 'initiator' | 'responder';

export interface CaptureFrame {
  readonly frame: number;
  /** frame.time_epoch in nanoseconds. */
  readonly ns: bigint;
  readonly from: CaptureSide;
  readonly seq: number;
  readonly payload: Uint8Array;
  readonly comment: string;
  readonly row: Record<string, string>;
}

export interface MpaDirection {
  /** Where full operation starts in the capture (the octet after the Request or Reply). */
  readonly s0: number;
  readonly markers: boolean;
}

export interface FailureCapture {
  readonly frames: readonly CaptureFrame[];
  /** Frames of the connection's set-up (handshake, MPA Request and Reply, fillers): stamped at its time. */
  readonly setup: number;
  readonly dirs: Readonly<Record<CaptureSide, MpaDirection>>;
  readonly crc: boolean;
  readonly verdicts: ReadonlyMap<number, CrcVerdict>;
}

const FIELDS = [...IWARP_FIELDS, 'frame.time_epoch', 'frame.comment', 'tcp.flags', 'tcp.srcport', 'tcp.seq_raw', 'tcp.payload', 'iwarp_mpa.key.req', 'iwarp_mpa.key.rep'];
/** SYN, SYN-ACK, ACK as tshark prints tcp.flags (RFC 9293 §3.5). */
const HANDSHAKE_FLAGS = ['0x0002', '0x0012', '0x0010'];
/** The MPA frame header's flag octet (RFC 6581 §6). */
const MPA_FLAGS_OFFSET = 16;

/** "1700000000.000000004" → nanoseconds. */
export const epochNs = (epoch: string): bigint => {
  const [s, frac = ''] = epoch.split('.');
  return BigInt(s!) * 1_000_000_000n + BigInt(frac.padEnd(9, '0').slice(0, 9));
};

export function readFailureCapture(bytes: Uint8Array): FailureCapture {
  const frames = tsharkFields(bytes, FIELDS).map(
    (row): CaptureFrame => ({
      frame: Number(row['frame.number']),
      ns: epochNs(row['frame.time_epoch']!),
      from: Number(row['tcp.srcport']) === CAPTURE_HOSTS.initiator.port ? 'initiator' : 'responder',
      seq: Number(row['tcp.seq_raw']),
      payload: Uint8Array.from(Buffer.from(row['tcp.payload']!.replaceAll(':', ''), 'hex')),
      comment: row['frame.comment']!,
      row,
    }),
  );
  // Frames 1–3 are the handshake, 4 and 5 the MPA Request and Reply.
  expect(frames.slice(0, 3).map((f) => f.row['tcp.flags']), 'frames 1–3 are the TCP handshake').toEqual(HANDSHAKE_FLAGS);
  const [request, reply] = [frames[3]!, frames[4]!];
  expect(request.row['iwarp_mpa.key.req'], 'frame 4 is the MPA Request').not.toBe('');
  expect(reply.row['iwarp_mpa.key.rep'], 'frame 5 is the MPA Reply').not.toBe('');
  const flags = (f: CaptureFrame) => f.payload[MPA_FLAGS_OFFSET]!;
  const end = (f: CaptureFrame) => (f.seq + f.payload.length) >>> 0;
  // Each side's M bit asks for markers in what it receives (spec/mpa.md §4.2).
  const dirs = {
    initiator: { s0: end(request), markers: (flags(reply) & MpaFlag.M) !== 0 },
    responder: { s0: end(reply), markers: (flags(request) & MpaFlag.M) !== 0 },
  };
  const crc = ((flags(request) | flags(reply)) & MpaFlag.C) !== 0;
  let setup = 0;
  while (setup < frames.length && frames[setup]!.ns === request.ns) setup++;
  return { frames, setup, dirs, crc, verdicts: new Map(tsharkCrcVerdicts(bytes).map((v) => [v.frame, v])) };
}

/**
 * The FPDU frames after the set-up; each must decode as iWARP (with a good CRC: the captures checked
 * here carry no CRC fault) unless Wireshark's marker bug exempts it.
 */
export function checkFpdus(c: FailureCapture): { readonly fpdus: CaptureFrame[]; readonly checked: number; readonly exempt: number } {
  const fpdus = c.frames.slice(c.setup).filter((f) => f.payload.length > 0);
  let checked = 0;
  let exempt = 0;
  for (const f of fpdus) {
    const dir = c.dirs[f.from];
    const where = `frame ${f.frame} (${f.from}, seq 0x${f.seq.toString(16)})`;
    if (wiresharkMarkerGap(f, dir)) {
      exempt++;
      continue;
    }
    const w = fromWire(f, dir);
    expect(f.row['iwarp_mpa.ulpdulength'], where).toBe(String(w.ulpdu.length));
    expect(f.row['iwarp_mpa.marker_fpduptr'], where).toBe(w.fpduptrs.join(','));
    if (c.crc) expect(c.verdicts.get(f.frame)?.good, `${where}: ${c.verdicts.get(f.frame)?.showname}`).toBe(true);
    checkDdpRdmap(f.row, w.ulpdu, where);
    checked++;
  }
  return { fpdus, checked, exempt };
}
