import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs the real tshark on a capture held in memory (spec/mpa.md §9). The capture goes to a fresh
 * directory under os.tmpdir(), removed afterwards; the same directory serves as an empty
 * WIRESHARK_CONFIG_DIR, so the caller's Wireshark preferences cannot change the decode.
 */

export const TSHARK = process.env.TSHARK ?? 'tshark';

/**
 * Always passed: `-n` (no name resolution: no DNS look-ups, ports stay numbers). The MPA
 * dissector is heuristic only; it must run before port dissectors (tcp.port 5000 is GSM IPA), and
 * the RPC-over-RDMA heuristic would otherwise claim Send payloads as malformed RPCoRDMA.
 */
export const TSHARK_BASE_OPTIONS: readonly string[] = Object.freeze([
  '-n',
  '-o',
  'tcp.try_heuristic_first:TRUE',
  '--disable-heuristic',
  'rpcrdma_iwarp',
]);

/** Ask tshark to verify IPv4 and TCP checksums (off by default: captures are often offloaded). */
export const TSHARK_CHECK_CHECKSUMS: readonly string[] = Object.freeze([
  '-o',
  'ip.check_checksum:TRUE',
  '-o',
  'tcp.check_checksum:TRUE',
]);

/** Show raw sequence numbers rather than numbers relative to the ISN. */
export const TSHARK_ABSOLUTE_SEQ: readonly string[] = Object.freeze(['-o', 'tcp.relative_sequence_numbers:FALSE']);

/** Values of `*.checksum.status` (Wireshark's proto_checksum_enum_e). */
export const ChecksumStatus = Object.freeze({ BAD: '0', GOOD: '1', UNVERIFIED: '2' });

/** PDML is verbose (every field of every frame); leave room for large captures. */
const MAX_OUTPUT = 256 * 1024 * 1024;
const FIELD_SEPARATOR = '|';
const AGGREGATOR = ',';

/** Runs `tshark -r <capture> <base options> <args>` and returns its stdout. */
export function runTshark(pcap: Uint8Array, args: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'rnic-tshark-'));
  try {
    const file = join(dir, 'capture.pcap');
    writeFileSync(file, pcap);
    const argv = ['-r', file, ...TSHARK_BASE_OPTIONS, ...args];
    const run = spawnSync(TSHARK, argv, {
      encoding: 'utf8',
      maxBuffer: MAX_OUTPUT,
      env: { ...process.env, WIRESHARK_CONFIG_DIR: dir },
    });
    if (run.error) throw new Error(`cannot run ${TSHARK}: ${run.error.message}`);
    if (run.status !== 0) {
      throw new Error(`${TSHARK} ${argv.join(' ')} exited with ${run.status ?? run.signal}:\n${run.stderr}`);
    }
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One row per frame: field name → value as tshark prints it ('' when absent). A field that occurs
 * more than once in a frame (two markers, two FPDUs) keeps every occurrence, comma-joined.
 */
export function tsharkFields(
  pcap: Uint8Array,
  fields: readonly string[],
  options: readonly string[] = [],
): Record<string, string>[] {
  const args = [
    ...options,
    '-T',
    'fields',
    '-E',
    `separator=${FIELD_SEPARATOR}`,
    '-E',
    'occurrence=a',
    '-E',
    `aggregator=${AGGREGATOR}`,
    ...fields.flatMap((f) => ['-e', f]),
  ];
  const lines = runTshark(pcap, args).split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => {
    const values = line.split(FIELD_SEPARATOR);
    if (values.length !== fields.length) throw new Error(`tshark row has ${values.length} columns, expected ${fields.length}: ${line}`);
    return Object.fromEntries(fields.map((f, i) => [f, values[i]!]));
  });
}

export interface CrcVerdict {
  /** frame.number, from 1. */
  readonly frame: number;
  readonly good: boolean;
  /** "CRC check: 0x… (Good CRC32)" or "CRC check: 0x… (Bad CRC32, should be 0x…)". */
  readonly showname: string;
}

const PACKET_OPEN = '<packet>';
const FRAME_NUMBER = /<field name="frame\.number"[^>]* show="(\d+)"/;
const CRC_SHOWNAME = /showname="(CRC check: [^"]*)"/g;

/**
 * The MPA CRC verdicts, one per FPDU in capture order. tshark prints the verdict only in the PDML
 * showname of `iwarp_mpa.crc_check`; the field value is just the wire octets.
 */
export function tsharkCrcVerdicts(pcap: Uint8Array, options: readonly string[] = []): CrcVerdict[] {
  const pdml = runTshark(pcap, [...options, '-T', 'pdml']);
  const verdicts: CrcVerdict[] = [];
  for (const packet of pdml.split(PACKET_OPEN).slice(1)) {
    const number = FRAME_NUMBER.exec(packet);
    if (!number) throw new Error('PDML packet without frame.number');
    for (const m of packet.matchAll(CRC_SHOWNAME)) {
      const showname = m[1]!;
      verdicts.push({ frame: Number(number[1]), good: showname.includes('(Good CRC32)'), showname });
    }
  }
  return verdicts;
}
