import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeDdpHeader, headerSize } from '../../ts-model/ddp/header';
import { Opcode, OPCODE_NAMES } from '../../ts-model/rdmap/constants';
import { decodeAtomicRequest, decodeAtomicResponse, decodeReadRequest, decodeTerminate } from '../../ts-model/rdmap/headers';
import { formatErrorCode } from '../../ts-model/terminate-codes';

/**
 * Transaction traces of a co-simulation, one JSON object per line (JSONL), one file per side: what
 * the model did and what the RTL did, in the same record shapes so `rnic diff` (trace-diff.ts) can
 * line them up. The RTL's records carry the cycle it did them in; the model's carry none.
 *
 * Records (`t`):
 * - `fpdu`: an FPDU in (from the peer) or out (sent by the QP) — TCP sequence number of its first
 *   octet, lengths (FPDU, ULPDU_Length, payload), the DDP header (STag/TO tagged, QN/MSN/MO
 *   untagged; RFC 5041 §4), the RDMAP opcode (RFC 5040 §4.3, RFC 7306), the Terminate's
 *   Layer/EType/Code (RFC 5040 §4.8), a Read Request's or an Atomic Request's fields, an Atomic
 *   Response's original value (RFC 7306 §5), the MPA CRC (RFC 5044 §4.4) and a hash of the payload;
 * - `placement`: octets written to host memory (QP, address, length, the data: hex up to 16 octets,
 *   else a hash), one record per contiguous run of what a step wrote, so the atomic unit's
 *   read-modify-write shows as its 8-octet result;
 * - `completion`: a completion-queue entry as the scoreboard compares it (events.ts);
 * - `first`: the first-FPDU completion of a fenced QP (RFC 6581 §3).
 * The first line of a file is `{"t":"meta",…}`: side, module, seed (and the scenario's name for
 * `rnic cosim --scenario`).
 */
export type TraceRecord =
  | ({ t: 'fpdu'; qp: number; dir: 'in' | 'out'; seq: number } & FpduFields & Cycle)
  | ({ t: 'placement'; qp: number; addr: string; len: number; data: string } & Cycle)
  | ({ t: 'completion'; qp: number; entry: string } & Cycle)
  | ({ t: 'first'; qp: number } & Cycle)
  | { t: 'meta'; side: string; module: string; seed: number; scenario?: string };

interface Cycle {
  cycle?: number;
}

export type FpduFields = Record<string, string | number>;

export type TraceSide = 'model' | 'rtl';

/** Octets of data a placement record spells out in hex; longer runs are hashed. */
const DATA_HEX_MAX = 16;
/** Hex digits of a data hash (sha256, truncated): 64 bits tells two payloads apart. */
const HASH_DIGITS = 16;

export const dataDigest = (d: Uint8Array): string =>
  d.length <= DATA_HEX_MAX ? Buffer.from(d).toString('hex') : `sha256:${createHash('sha256').update(d).digest('hex').slice(0, HASH_DIGITS)}`;

const hex32 = (v: number): string => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
const hex64 = (v: bigint): string => `0x${v.toString(16)}`;

/**
 * The fields of one FPDU: `wire` as it went on the wire (markers in), `ulpdu` the ULPDU MPA took
 * out of it (null when it did not deframe), `crc` whether the stream carries the MPA CRC.
 */
export function fpduFields(wire: Uint8Array, ulpdu: Uint8Array | null, crc: boolean): FpduFields {
  const f: FpduFields = { len: wire.length };
  if (crc && wire.length >= 4) f.crc = Buffer.from(wire.subarray(wire.length - 4)).toString('hex');
  if (!ulpdu) return { ...f, mpa: 'did not deframe' };
  f.ulpdu = ulpdu.length;
  const h = decodeDdpHeader(ulpdu);
  if (!h) return f;
  const op = h.rsvdUlp & 0xf;
  f.op = OPCODE_NAMES[op] ?? `undefined 0x${op.toString(16)}`;
  f.ddp = `${h.tagged ? 'T' : 'U'}${h.last ? 'L' : ''}`;
  if (h.tagged) Object.assign(f, { stag: hex32(h.stag), to: hex64(h.to) });
  else Object.assign(f, { qn: h.qn, msn: h.msn, mo: h.mo });
  const body = ulpdu.subarray(headerSize(h.tagged));
  f.payload = body.length;
  // The RDMAP header of the untagged messages that have one (RFC 5040 §4.4, §4.8; RFC 7306 §5).
  if (!h.tagged && op === Opcode.TERMINATE) {
    const t = decodeTerminate(body);
    if (t) f.terminate = formatErrorCode(t);
  } else if (!h.tagged && op === Opcode.READ_REQUEST && body.length >= 28) {
    const q = decodeReadRequest(body);
    Object.assign(f, { sinkStag: hex32(q.sinkStag), sinkTo: hex64(q.sinkTo), size: q.size, srcStag: hex32(q.srcStag), srcTo: hex64(q.srcTo) });
  } else if (!h.tagged && op === Opcode.ATOMIC_REQUEST && body.length >= 52) {
    const a = decodeAtomicRequest(body);
    Object.assign(f, { aop: a.aopcode, reqId: a.requestId, atomicStag: hex32(a.stag), atomicTo: hex64(a.to), addSwap: hex64(a.addSwapData), compare: hex64(a.compareData) });
  } else if (!h.tagged && op === Opcode.ATOMIC_RESPONSE && body.length >= 12) {
    const a = decodeAtomicResponse(body);
    Object.assign(f, { reqId: a.requestId, original: hex64(a.value) });
  }
  f.hash = dataDigest(body);
  return f;
}

/** Octets written, [lo, hi] inclusive; the RTL's carry the cycle of the write. */
export interface WrittenSpan {
  readonly lo: bigint;
  readonly hi: bigint;
  readonly cycle?: number;
}

/** Contiguous runs of written octets, in address order: [lo, hi] inclusive, the latest cycle of each. */
export function runsOf(spans: readonly WrittenSpan[]): { lo: bigint; hi: bigint; cycle: number }[] {
  const out: { lo: bigint; hi: bigint; cycle: number }[] = [];
  for (const s of [...spans].sort((x, y) => (x.lo < y.lo ? -1 : x.lo > y.lo ? 1 : 0))) {
    const last = out[out.length - 1];
    if (last && s.lo <= last.hi + 1n) {
      if (s.hi > last.hi) last.hi = s.hi;
      last.cycle = Math.max(last.cycle, s.cycle ?? 0);
    } else out.push({ lo: s.lo, hi: s.hi, cycle: s.cycle ?? 0 });
  }
  return out;
}

/**
 * The `placement` records of what one step wrote on QP `qp`: one per contiguous run, its data read
 * back with `read` (the memory as the step left it); the RTL's (`withCycle`) carry the latest cycle
 * of each run.
 */
export function placementRecords(qp: number, spans: readonly WrittenSpan[], read: (addr: bigint, len: number) => Uint8Array, withCycle: boolean): TraceRecord[] {
  return runsOf(spans).map((s) => {
    const len = Number(s.hi - s.lo) + 1;
    return { t: 'placement', qp, addr: `0x${s.lo.toString(16)}`, len, data: dataDigest(read(s.lo, len)), ...(withCycle && { cycle: s.cycle }) };
  });
}

/** One side's records, kept in memory during the run and written at its end. */
export class TraceLog {
  readonly records: TraceRecord[] = [];

  constructor(readonly side: TraceSide) {}

  add(r: TraceRecord): void {
    this.records.push(r);
  }
}

/**
 * Records to one side, the other or both (`logs` null: nothing is recorded). A record for both
 * goes to the RTL's side with the cycle `now()` gives: the same FPDU in, from the peer, to both.
 */
export function traceRecorder(logs: { model: TraceLog; rtl: TraceLog } | null, now: () => number): (side: TraceSide | 'both', rec: TraceRecord) => void {
  return (side, rec) => {
    if (!logs) return;
    if (side !== 'rtl') logs.model.add(rec);
    if (side !== 'model') logs.rtl.add(side === 'both' ? ({ ...rec, cycle: now() } as TraceRecord) : rec);
  };
}

/** The trace files of a run: `<dir>/<name>-model.jsonl` and `<dir>/<name>-rtl.jsonl`. */
export const traceFiles = (dir: string, name: string): { model: string; rtl: string } => ({
  model: join(dir, `${name}-model.jsonl`),
  rtl: join(dir, `${name}-rtl.jsonl`),
});

/** Writes both sides; returns the two paths (model first). */
export function writeTraces(dir: string, name: string, meta: { module: string; seed: number; scenario?: string }, logs: { model: TraceLog; rtl: TraceLog }): string[] {
  mkdirSync(dir, { recursive: true });
  const files = traceFiles(dir, name);
  for (const side of ['model', 'rtl'] as const) {
    const head: TraceRecord = { t: 'meta', side, ...meta };
    writeFileSync(files[side], [head, ...logs[side].records].map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
  return [files.model, files.rtl];
}

/** A trace file's records with their line numbers; a line that is not a record is named in the error. */
export function readTrace(file: string): { line: number; r: TraceRecord }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new TraceError(`${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const out: { line: number; r: TraceRecord }[] = [];
  for (const [i, s] of text.split('\n').entries()) {
    if (!s.trim()) continue;
    let r: unknown;
    try {
      r = JSON.parse(s);
    } catch {
      throw new TraceError(`${file}:${i + 1}: not a JSON object: ${s.slice(0, 60)}`);
    }
    if (typeof r !== 'object' || r === null || typeof (r as { t?: unknown }).t !== 'string') throw new TraceError(`${file}:${i + 1}: a record needs a string field "t"`);
    out.push({ line: i + 1, r: r as TraceRecord });
  }
  return out;
}

/** A trace file that cannot be read as one: the CLI prints the message, no stack. */
export class TraceError extends Error {}
