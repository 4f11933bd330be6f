import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TARGET_CLOCK_MHZ } from '../../hdl-gen/gen/config';
import { MpaDeframer, MpaFramer, type ConnectionResult, type MpaStreamConfig } from '../../ts-model/mpa';
import { seqDiff } from '../../ts-model/mpa/sequence';
import { PcapngFile } from '../pcap/pcapng-file';
import { CAPTURE_HOSTS, captureConversation } from '../pcap/scenario-pcap';
import { leadIn } from '../pcap/stream-lead-in';
import { DEFAULT_EPOCH_MICROS, type TcpConversation } from '../pcap/tcp-frames';
import { describeUlpdu, ulpduFields } from './ulpdu-text';

/**
 * The failure captures of one co-simulated connection: the TCP payload both ways as it went (the
 * peer's FPDUs into the RTL, `in`; the RTL's out, `out`), each with the cycle it crossed the port.
 * `write` turns it into two pcapng files of the same connection for Wireshark/tshark,
 * `<name>-rtl.pcapng` with what the RTL sent and `<name>-model.pcapng` with what the model would
 * have sent (its ULPDUs framed at the same sequence numbers, in the RTL's slots). Each capture
 * holds, in order:
 * - the TCP handshake, the peer's MPA Request and the RTL's MPA Reply (RFC 6581 §6, spec/mpa.md §7),
 *   which tell Wireshark markers and CRC, each ending where full operation starts in its direction
 *   (S0, spec/mpa.md §4.3; moved to a marker position nearer the stream, sim/pcap/stream-lead-in.ts,
 *   when the co-simulated stream starts after S0, with FPDUs of zeros in between);
 * - the FPDUs both ways, stamped with simulation time (`captureTimeNs`), the first packet that
 *   differs from the model's carrying a pcapng comment that says what differs.
 */

/** Capture time of cycle 0: the fixed epoch of the project's captures (2023-11-14T22:13:20Z), in ns. */
export const CAPTURE_EPOCH_NS = DEFAULT_EPOCH_MICROS * 1000n;

/** The capture time of `cycle`: the epoch plus the cycle at the design's clock (4 ns a cycle at 250 MHz). */
export const captureTimeNs = (cycle: number): bigint => CAPTURE_EPOCH_NS + (BigInt(cycle) * 1000n) / BigInt(TARGET_CLOCK_MHZ);

/** Every comment that marks a differing packet starts so (`tshark -Y 'frame.comment contains "first difference"'`). */
export const FIRST_DIFFERENCE = 'first difference from the model';

export interface WireLogConnection {
  /** The MPA Request (the peer's) and Reply (the RTL's; none if it sent none): their octets. */
  readonly startup: Pick<ConnectionResult, 'request' | 'reply'>;
  /** The peer's direction; `seq` (default S0) is where the FPDUs logged here start. */
  readonly rx: MpaStreamConfig;
  /** The RTL's direction, likewise; it frames the model's ULPDUs. */
  readonly tx: MpaStreamConfig;
  /** The cycle the QP was configured for this connection: its set-up frames carry that time. */
  readonly cycle: number;
}

/** The first mismatch of the run on this connection: where to put the mark when no packet differs. */
export interface WireLogMismatch {
  readonly cycle: number;
  readonly what: string;
}

interface Entry {
  readonly from: 'peer' | 'rtl';
  readonly data: Uint8Array;
  cycle: number | undefined;
}

/** The first differing FPDU of the RTL's direction (its index among them) and what the comment says. */
interface Difference {
  readonly index: number;
  readonly text: string;
}

export class WireLog {
  private readonly entries: Entry[] = [];

  constructor(private readonly conn: WireLogConnection) {}

  /** One FPDU of the peer into the RTL; call what it returns with the cycle its last octet went in. */
  in(fpdu: Uint8Array): (cycle: number) => void {
    const e: Entry = { from: 'peer', data: fpdu, cycle: undefined };
    this.entries.push(e);
    return (cycle) => void (e.cycle = cycle);
  }

  /** One FPDU the RTL sent, its last beat taken at `cycle`. */
  out(fpdu: Uint8Array, cycle: number | undefined): void {
    this.entries.push({ from: 'rtl', data: fpdu, cycle });
  }

  /**
   * Writes `<name>-rtl.pcapng` and `<name>-model.pcapng` into `dir`; returns their paths. Without a
   * differing packet, the mark goes on the last packet at or before `first` (the run's first
   * mismatch on this connection).
   */
  write(dir: string, name: string, modelSent: readonly Uint8Array[], first?: WireLogMismatch): string[] {
    mkdirSync(dir, { recursive: true });
    const framer = new MpaFramer(this.conn.tx);
    const model = modelSent.map((u) => framer.frame(u).wire);
    const rtl = this.entries.filter((e) => e.from === 'rtl').map((e) => e.data);
    const diff = this.firstDifference(rtl, model, modelSent);
    const files = [join(dir, `${name}-rtl.pcapng`), join(dir, `${name}-model.pcapng`)];
    writeFileSync(files[0]!, this.capture(`${name}, as the RTL sent it`, (k) => rtl[k], rtl.length, diff, first));
    writeFileSync(files[1]!, this.capture(`${name}, as the model would have sent it`, (k) => model[k], model.length, diff, first));
    return files;
  }

  /** The log in time order (an FPDU the port never took keeps the time of the one before it). */
  private timeline(): { readonly from: Entry['from']; readonly data: Uint8Array; readonly cycle: number }[] {
    let last = this.conn.cycle;
    const timed = this.entries.map((e) => ({ from: e.from, data: e.data, cycle: (last = e.cycle ?? last) }));
    // Stable: within a cycle, log order; each direction is in order already.
    return timed.sort((a, b) => a.cycle - b.cycle);
  }

  /**
   * One capture: set-up, fillers, then the peer's FPDUs and this side's (`sent(k)`: its k-th, in
   * the RTL's k-th slot; those beyond the RTL's at the end).
   */
  private capture(title: string, sent: (k: number) => Uint8Array | undefined, count: number, diff: Difference | null, first?: WireLogMismatch): Uint8Array {
    const { request, reply } = this.conn.startup;
    const lead = { initiator: leadIn(this.conn.rx), responder: leadIn(this.conn.tx) };
    // Full operation starts with the octet after each frame (spec/mpa.md §4.3); each SYN takes a number.
    const conv = captureConversation({ initiator: seqDiff(lead.initiator.s0, request.octets.length + 1), responder: seqDiff(lead.responder.s0, (reply?.octets.length ?? 0) + 1) });
    const frames: { cycle: number; comment?: string }[] = [];
    /** Runs `f` on the conversation and stamps the frames it added at `cycle`. */
    const at = (cycle: number, f: (c: TcpConversation) => void, comment?: string) => {
      const before = conv.frames().length;
      f(conv);
      for (let i = before; i < conv.frames().length; i++) frames.push({ cycle, ...(comment !== undefined && { comment }) });
    };
    at(this.conn.cycle, (c) => {
      c.handshake();
      c.send('initiator', request.octets);
      if (reply) c.send('responder', reply.octets);
      for (const side of ['initiator', 'responder'] as const) for (const s of lead[side].segments) c.send(side, s);
    });
    let k = 0;
    let last = this.conn.cycle;
    for (const e of this.timeline()) {
      last = e.cycle;
      if (e.from === 'peer') {
        at(e.cycle, (c) => c.send('initiator', e.data));
        continue;
      }
      const d = sent(k);
      if (d) at(e.cycle, (c) => c.send('responder', d), diff?.index === k ? diff.text : undefined);
      k++;
    }
    // This side's FPDUs beyond the RTL's: due by the time the run found them missing.
    const end = Math.max(last, first?.cycle ?? 0);
    for (; k < count; k++) {
      const d = sent(k)!;
      at(end, (c) => c.send('responder', d), diff?.index === k ? diff.text : undefined);
    }
    // The mark on a packet this side never sent, or without a differing packet: on the last packet
    // at or before the first mismatch (the last packet, if there is none).
    if (!frames.some((f) => f.comment !== undefined)) {
      const text = diff ? `${diff.text} (this side sent no such FPDU: the mark is on its last packet)` : first ? `no FPDU differs from the model's; the first mismatch, at cycle ${first.cycle}: ${first.what}` : 'no FPDU differs from the model\u2019s';
      const until = first && !diff ? first.cycle : Infinity;
      let i = frames.length - 1;
      while (i > 0 && frames[i]!.cycle > until) i--;
      frames[i] = { ...frames[i]!, comment: text };
    }
    const file = new PcapngFile({
      application: 'rnic cosim',
      comment:
        `Co-simulation failure capture of ${title}. ${CAPTURE_HOSTS.initiator.ip}:${CAPTURE_HOSTS.initiator.port} is the peer (MPA initiator), ` +
        `${CAPTURE_HOSTS.responder.ip}:${CAPTURE_HOSTS.responder.port} the RTL's QP (MPA responder). Timestamps are simulation time: ` +
        `${new Date(Number(DEFAULT_EPOCH_MICROS / 1000n)).toISOString()} + cycle × ${1000 / TARGET_CLOCK_MHZ} ns (${TARGET_CLOCK_MHZ} MHz); the set-up frames carry the cycle the QP was configured. ` +
        'FPDUs of zeros right after the MPA Request or Reply stand for the octets that direction carried before the co-simulated stream (not recorded; ' +
        'with markers, S0 here is the marker position before the stream, S0 + 512·n). ' +
        `The first packet that differs from the model's carries a comment starting "${FIRST_DIFFERENCE}".`,
    });
    conv.frames().forEach((r, i) => file.add(r.frame, captureTimeNs(frames[i]!.cycle), frames[i]!.comment));
    return file.bytes();
  }

  /** The first k where the RTL's k-th FPDU and the model's differ (or one side has none), and what differs. */
  private firstDifference(rtl: readonly Uint8Array[], model: readonly Uint8Array[], modelUlpdus: readonly Uint8Array[]): Difference | null {
    let k = 0;
    while (k < rtl.length && k < model.length && Buffer.compare(rtl[k]!, model[k]!) === 0) k++;
    if (k === rtl.length && k === model.length) return null;
    const head = `${FIRST_DIFFERENCE}: FPDU ${k} the QP sends`;
    if (k >= rtl.length) return { index: k, text: `${head}: the RTL sent none; the model sends ${describeUlpdu(modelUlpdus[k]!)}` };
    // The RTL's FPDUs before k equal the model's: deframed in order, k is where the stream is.
    const deframer = new MpaDeframer(this.conn.tx);
    for (let i = 0; i < k; i++) deframer.push(rtl[i]!);
    const events = deframer.push(rtl[k]!);
    const got = events.length === 1 && events[0]!.kind === 'fpdu' ? events[0]!.ulpdu : null;
    const rtlText = got ? null : `an FPDU that does not deframe (${events.map((e) => (e.kind === 'fpdu' ? 'a ULPDU' : `MPA error 0x${e.code.toString(16)}: ${e.reason}`)).join('; ') || 'incomplete'})`;
    if (k >= model.length) return { index: k, text: `${head}: the RTL sent ${rtlText ?? describeUlpdu(got!)}; the model sends none` };
    let octet = 0;
    while (octet < rtl[k]!.length && octet < model[k]!.length && rtl[k]![octet] === model[k]![octet]) octet++;
    const where = `first differing octet ${octet} of ${rtl[k]!.length} (RTL) / ${model[k]!.length} (model)`;
    if (!got) return { index: k, text: `${head}: the RTL sent ${rtlText}; the model sends ${describeUlpdu(modelUlpdus[k]!)}; ${where}` };
    // The fields that differ, each side in the same order (ulpdu-text.ts decodes them).
    const want = new Map(ulpduFields(modelUlpdus[k]!));
    const fields = ulpduFields(got).filter(([f, v]) => want.get(f) !== v);
    const what = fields.length
      ? `the RTL sent ${fields.map(([f, v]) => `${f} ${v}`).join('; ')}, the model ${fields.map(([f]) => `${f} ${want.get(f) ?? '(none)'}`).join('; ')}`
      : 'the same ULPDU framed differently (markers, pad or CRC)';
    return { index: k, text: `${head}: ${what}; ${where}` };
  }
}
