import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { unsupportedOptions } from '../../hdl-gen/gen/rtl-options';
import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { HostMemory } from '../../ts-model/memory/host-memory';
import { stagIndex } from '../../ts-model/memory/stag';
import { MpaDeframer, MpaFramer } from '../../ts-model/mpa';
import { mulpdu } from '../../ts-model/mpa/mulpdu';
import { OPCODE_NAMES, Opcode } from '../../ts-model/rdmap/constants';
import type { RnicEvent } from '../../ts-model/rnic/events';
import type { Scenario } from '../../ts-model/scenario/schema';
import { runScenario, type ScenarioResult } from '../../ts-model/scenario/run';
import { hex } from '../../ts-model/util/hex';
import { prng } from '../../ts-model/util/prng';
import { dutSelection, type DutOptions, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';
import { modelEvent } from './events';
import type { QpConfig } from './qp-config';
import { isResponse } from './rnic';
import { tcpSegments } from './peer-wire';
import { RnicBench } from './rnic-bench';
import type { LocalWr } from './rx-peer';
import { firstMemoryDifference, memoryMismatch, type RnicMismatch, type Span, type TopRunResult } from './scoreboard';
import { TraceLog, fpduFields, placementRecords, traceRecorder, writeTraces, type WrittenSpan } from './trace';
import { describeUlpdu, sideBySide } from './ulpdu-text';
import { WireLog } from './wire-log';

/**
 * A scenario file (the one `rnic run` runs on the model) co-simulated with the RTL as the
 * responder, on QP 0 of rnic_top_w<W>. The model runs the scenario first; then the RTL gets what
 * the model's responder got: its regions in the STag table, its receive buffers, its work requests
 * (in op order, each before the initiator's FPDUs of later ops), and every FPDU the initiator sent
 * after the MPA Reply (the RTR among them), as TCP payload in random segments. Compared:
 * - every FPDU the RTL sends (framing octet for octet at the responder's sequence numbers; ULPDUs
 *   per queue against the model's responder);
 * - every completion-queue entry against the responder's events;
 * - host memory, with the comparison the random mode uses (scoreboard.ts): after each initiator
 *   FPDU, what the model placed for it (as the model had it then); after each completion, and at the
 *   end, every receive buffer and every STag region of the responder (Immediate Data included
 *   wherever the options place it);
 * - protection: every octet the RTL writes lies in a placement of the model's responder.
 * Each difference carries the cycle it happened at (and a wrong octet the write that put it there).
 *
 * Transaction traces (trace.ts), in the records of the random run so `rnic diff` reads them: to
 * `traceDir` when given, else on a failure to `evidenceDir`. On QP 0: every FPDU in (the same
 * record on both sides, the RTL's with the cycle it went in) and out (the RTL's at the cycle it
 * left; the model's ULPDU of the same queue framed where the RTL's FPDU starts, as the scoreboard
 * compares them), and per initiator FPDU the completions and the placements that followed it. The
 * QP is not fenced, so `first` records come only from an RTL that makes one.
 *
 * Refused by name: options the RTL does not implement (hdl-gen/gen/rtl-options.ts), faults that act
 * inside the responder (an RNIC failure, withdrawn receive buffers), a lost TCP connection, an abort
 * by the responder, and STags beyond the RTL's table.
 */
/** `mutate` edits the Verilog of `mutateModule`, by default the top (sim/harness/open-dut.ts). */
export interface ScenarioCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  readonly config?: DutOptions['config'];
  readonly evidenceDir?: string;
  /** Where to write the transaction traces of both sides (trace.ts); on a failure without it, to evidenceDir. */
  readonly traceDir?: string;
}

export interface ScenarioCosimResult extends TopRunResult {
  readonly scenario: string;
  /** Memory comparisons made (spans placed, and whole regions and buffers). */
  readonly memoryChecks: number;
  /** The trace files (model, RTL), when written. */
  readonly traces: string[];
}

/** The octets a memory write beat of a W-octet port enables, first to last strobe (none: null). */
function writtenSpan(w: { addr: bigint; strb: bigint; cycle: number }, W: number): Required<WrittenSpan> | null {
  const lanes = [...Array(W).keys()].filter((j) => (w.strb >> BigInt(j)) & 1n);
  if (!lanes.length) return null;
  return { lo: w.addr + BigInt(lanes[0]!), hi: w.addr + BigInt(lanes[lanes.length - 1]!), cycle: w.cycle };
}

/** Host memory for the responder's Write and Send data, away from its regions. */
const SOURCE_BASE = 0x7000_0000_0000n;

/** Why the RTL cannot stand in for this scenario's responder, one line per reason (none: it can). */
export function scenarioRefusals(s: Scenario, stagDepth: number, model: ScenarioResult): string[] {
  const out = unsupportedOptions(s.options);
  for (const f of s.faults) {
    if ('op' in f && (f.kind === 'rnic-failure' || f.kind === 'no-receive-buffer') && s.ops[f.op]?.from === 'initiator') out.push(`faults[].kind '${f.kind}' acts inside the responder`);
    // The RTL sits above TCP: a lost connection is the TCP layer's news, not an input it has.
    if ('op' in f && f.kind === 'connection-lost') out.push("faults[].kind 'connection-lost' (the RTL has no TCP-closed input)");
  }
  if (s.ops.some((o) => o.op === 'abort' && o.from === 'responder')) out.push("ops[].op 'abort' from the responder");
  const beyond = model.rnics.responder.stags.regions().filter((g) => stagIndex(g.stag) >= stagDepth);
  if (beyond.length) {
    const list = beyond.map((g) => `0x${g.stag.toString(16)} (index ${stagIndex(g.stag)})`).join(', ');
    out.push(`regions[] STag ${list}: the RTL's STag table (stagDepth ${stagDepth}) holds indices 0..${stagDepth - 1}; give --config a larger stagDepth`);
  }
  return out;
}

export function cosimScenario(s: Scenario, opts: ScenarioCosimOptions): ScenarioCosimResult {
  // The model first; every octet the responder places is kept as it landed.
  const placed = new Map<RnicEvent, Uint8Array>();
  const model = runScenario(s, {
    onEvent: (e, rnics) => void (e.type === 'placement' && e.side === 'responder' && placed.set(e, rnics.responder.memory.read(e.address, e.length))),
  });
  const depth = opts.config?.stagDepth ?? DEFAULT_CONFIG.stagDepth;
  const refusals = scenarioRefusals(s, depth, model);
  if (refusals.length) throw new Error(`scenario '${s.name ?? '(unnamed)'}' cannot run on the RTL: ${refusals.join('; ')}`);
  const conn = model.link.connection;
  const rx = conn.initiatorToResponder;
  const tx = conn.responderToInitiator;

  const W = opts.width;
  const r = prng(opts.seed);
  const bench = RnicBench.open(
    W,
    { ...dutSelection(opts), ...(opts.mutate && { mutateModule: opts.mutateModule ?? `rnic_top_w${W}` }), ...(opts.config && { config: opts.config }) },
    { r, backpressure: 0.2, noise: true },
  );
  bench.reset();
  const dut = bench.model;
  const mismatches = new Tally<RnicMismatch>();
  const violations: string[] = [];
  let memoryChecks = 0;
  /** A difference at `cycle` (default: now, for something the RTL has not done by now). */
  const miss = (what: string, expected: string, actual: string, more: { side?: string; cycle?: number; write?: RnicMismatch['write'] } = {}) =>
    mismatches.add({ qp: 0, stream: 1, op: -1, cycle: more.cycle ?? dut.cycles, what, expected, actual, ...(more.side && { sideBySide: more.side }), ...(more.write !== undefined && { write: more.write }) });
  const timer = bench.timer();
  const log = new WireLog({ startup: conn, rx, tx, cycle: dut.cycles });
  const responder = model.rnics.responder;
  const modelSent: Uint8Array[] = [];
  // Transaction traces of both sides (trace.ts), when they may be written: nothing is built otherwise.
  const traceDir = opts.traceDir ?? opts.evidenceDir;
  const traces = traceDir !== undefined ? { model: new TraceLog('model'), rtl: new TraceLog('rtl') } : null;
  const trace = traceRecorder(traces, () => dut.cycles);
  let fpdusIn = 0;
  let fpdusOut = 0;
  let workRequests = 0;

  if (model.link.established) {
    const c = s.connection;
    const cfg: QpConfig = {
      pd: c.responder.pd,
      ird: conn.responder.ird,
      ord: conn.responder.ord,
      msn: c.initialMsn ?? 1,
      mulpdu: mulpdu(c.emss, tx.markers, s.options.mpa),
      maxUlpdu: s.options.mpa.maxUlpduLength,
      bigEndian: s.options.rdmap.hostMemoryEndian === 'big',
      rfc7306: s.options.rdmap.rfc7306,
      crc: conn.crc,
      rx: { s0: rx.s0, seq: rx.s0, markers: rx.markers },
      tx: { s0: tx.s0, seq: tx.s0, markers: tx.markers },
    };
    bench.cfg.push({ qp: 0, c: cfg });
    bench.settle('configuring QP 0');
    for (const g of responder.stags.regions()) {
      bench.stagCfg.push({ stag: g.stag, pd: g.pd, base: g.base, length: g.length, access: [...g.access], va: g.addressing === 'va', invalidatable: g.invalidatable });
    }
    // The responder's receive buffers, where the model put them, in its order.
    const buffers = model.buffers.filter((b) => b.at === 'responder');
    for (const b of buffers) bench.recv.push({ qp: 0, addr: b.addr, len: b.length });
    bench.settle('programming the STag table');

    // What the responder placed for each FPDU of the initiator: in the model's event list an FPDU's
    // fpdu-sent comes before what its delivery caused.
    const placedFor: { addr: bigint; data: Uint8Array }[][] = [];
    // Likewise its completion-queue entries (traces): [k] those after the initiator's k-th FPDU.
    const entriesAfter: string[][] = [[]];
    for (const e of model.events) {
      if (e.type === 'fpdu-sent' && e.side === 'initiator') {
        placedFor.push([]);
        entriesAfter.push([]);
      } else if (e.type === 'placement' && e.side === 'responder') placedFor[placedFor.length - 1]!.push({ addr: e.address, data: placed.get(e)! });
      const entry = e.side === 'responder' ? modelEvent(e) : null;
      if (entry !== null) entriesAfter[entriesAfter.length - 1]!.push(entry);
    }
    /** The responder's memory as the model had it after the FPDUs fed so far. */
    const expected = new HostMemory();
    const everything: Span[] = [
      ...buffers.map((b) => ({ addr: b.addr, len: b.length })),
      ...responder.stags.regions().map((g) => ({ addr: g.base, len: Number(g.length) })),
    ];
    const compareMemory = (spans: readonly Span[], what: string) => {
      memoryChecks++;
      const d = firstMemoryDifference(spans, (a, n) => expected.read(a, n), (a, n) => bench.mem.memory.read(a, n), bench.mem.writes, W);
      if (!d) return false;
      const mm = memoryMismatch(d, what, dut.cycles);
      miss(mm.what, mm.expected, mm.actual, { cycle: mm.cycle, write: mm.write ?? null });
      return true;
    };

    // What the responder sent, deframed: the model's ULPDUs per queue; Atomic Request IDs in order.
    const outDeframer = new MpaDeframer(tx);
    for (const g of model.segments) if (g.from === 'responder' && g.kind === 'fpdu') for (const e of outDeframer.push(g.payload)) if (e.kind === 'fpdu') modelSent.push(e.ulpdu);
    const expectedOut = { response: modelSent.filter(isResponse), request: modelSent.filter((u) => !isResponse(u)) };
    const atomicIds = expectedOut.request.filter((u) => (u[1]! & 0xf) === Opcode.ATOMIC_REQUEST && u.length >= UNTAGGED_HEADER_SIZE + 8).map((u) => new DataView(u.buffer, u.byteOffset + UNTAGGED_HEADER_SIZE).getUint32(4));
    const got = { response: 0, request: 0 };
    const txDeframer = new MpaDeframer(tx);
    const txFramer = new MpaFramer(tx);
    /** Where the RTL's next FPDU starts in the responder's stream (traces). */
    let txSeq = tx.s0;
    /** The model's FPDU for `u`, framed where the RTL's corresponding one starts (as the scoreboard compares them); its length on the wire. */
    const traceModelOut = (u: Uint8Array, seq: number): number => {
      if (!traces) return 0;
      const wire = new MpaFramer({ ...tx, seq }).frame(u).wire;
      trace('model', { t: 'fpdu', qp: 0, dir: 'out', seq, ...fpduFields(wire, u, conn.crc) });
      return wire.length;
    };
    const drain = () => {
      for (let f = bench.mAxis.recv(); f; f = bench.mAxis.recv()) {
        fpdusOut++;
        log.out(f.data, f.cycle);
        const us = txDeframer.push(f.data);
        const u = us.length === 1 && us[0]!.kind === 'fpdu' ? us[0]!.ulpdu : null;
        const seq = txSeq;
        txSeq = (txSeq + f.data.length) >>> 0;
        trace('rtl', { t: 'fpdu', qp: 0, dir: 'out', seq, ...fpduFields(f.data, u, conn.crc), cycle: f.cycle ?? dut.cycles });
        if (!u) {
          miss('an FPDU the RTL sent', 'one valid FPDU', `${hex(f.data.subarray(0, 32))}…`, { cycle: f.cycle });
          continue;
        }
        const want = txFramer.frame(u).wire;
        if (Buffer.compare(want, f.data) !== 0) miss('FPDU framing', hex(want.subarray(0, 48)), hex(f.data.subarray(0, 48)), { cycle: f.cycle });
        const cls = isResponse(u) ? 'response' : 'request';
        const exp = expectedOut[cls][got[cls]++];
        if (exp) traceModelOut(exp, seq);
        if (!exp) miss(`${cls} ULPDU ${got[cls] - 1} (${OPCODE_NAMES[u[1]! & 0xf]})`, '(none)', describeUlpdu(u), { cycle: f.cycle });
        else if (Buffer.compare(exp, u) !== 0) miss(`${cls} ULPDU ${got[cls] - 1}`, describeUlpdu(exp), describeUlpdu(u), { side: sideBySide(exp, u), cycle: f.cycle });
      }
    };

    // The responder's work requests, each before the initiator's FPDUs of later ops.
    const posts = model.posted.filter((p) => p.from === 'responder');
    let nextPost = 0;
    let sourceAt = SOURCE_BASE;
    let atomics = 0;
    const postUpTo = (index: number) => {
      let any = false;
      while (nextPost < posts.length && posts[nextPost]!.index < index) {
        const { wr } = posts[nextPost++]!;
        let addr = 0n;
        if (wr.kind === 'write' || wr.kind === 'send') {
          addr = sourceAt + BigInt(r.int(0, 63));
          bench.mem.memory.write(addr, wr.data);
          sourceAt += BigInt(wr.data.length + 0x1000) & ~0xfffn;
        }
        const w: LocalWr = { wr, addr, requestId: wr.kind === 'atomic' ? atomicIds[atomics++] ?? 0 : 0 };
        bench.post(0, w);
        workRequests++;
        any = true;
      }
      if (any) {
        bench.settle('work requests');
        drain();
      }
    };
    // One step of the traces: the completions and placements of both sides since the last.
    let cqTraced = 0;
    let writesTraced = 0;
    const traceStep = (entries: readonly string[], modelPlaced: readonly { addr: bigint; data: Uint8Array }[]) => {
      if (!traces) return;
      for (const entry of entries) trace('model', { t: 'completion', qp: 0, entry });
      for (const e of bench.cq.slice(cqTraced)) {
        if (!e.sent) trace('rtl', e.first ? { t: 'first', qp: 0, cycle: e.cycle } : { t: 'completion', qp: 0, entry: e.text, cycle: e.cycle });
      }
      cqTraced = bench.cq.length;
      const spans = modelPlaced.map((p) => ({ lo: p.addr, hi: p.addr + BigInt(p.data.length) - 1n }));
      for (const rec of placementRecords(0, spans, (a, n) => expected.read(a, n), false)) trace('model', rec);
      const writes = bench.mem.writes.slice(writesTraced).flatMap((w) => writtenSpan(w, W) ?? []);
      writesTraced = bench.mem.writes.length;
      for (const rec of placementRecords(0, writes, (a, n) => bench.mem.memory.read(a, n), true)) trace('rtl', rec);
    };
    /** The initiator's FPDUs deframed, for their trace records. */
    const rxDeframer = new MpaDeframer(rx);
    const initiatorFpdus = model.segments.filter((g) => g.from === 'initiator' && g.kind === 'fpdu');
    traceStep(entriesAfter[0]!, []);
    for (const [j, g] of initiatorFpdus.entries()) {
      postUpTo(g.op ?? -1);
      fpdusIn++;
      if (traces) {
        const us = rxDeframer.push(g.payload);
        trace('both', { t: 'fpdu', qp: 0, dir: 'in', seq: g.seq, ...fpduFields(g.payload, us.length === 1 && us[0]!.kind === 'fpdu' ? us[0]!.ulpdu : null, conn.crc) });
      }
      const taken = log.in(g.payload);
      const segs = tcpSegments(g.payload, r, W);
      segs.forEach((seg, i) => bench.sAxis.send(seg, { tid: 0 }, i === segs.length - 1 ? () => taken(dut.cycles) : undefined));
      const completions = bench.cq.length;
      bench.settle(`the initiator's FPDU of op ${g.op ?? '(none)'}`);
      drain();
      for (const p of placedFor[j] ?? []) expected.write(p.addr, p.data);
      traceStep(entriesAfter[j + 1] ?? [], placedFor[j] ?? []);
      if (mismatches.count === 0) compareMemory((placedFor[j] ?? []).map((p) => ({ addr: p.addr, len: p.data.length })), `placement for the initiator's FPDU ${j}`);
      // A completion tells the host its buffer or region is ready: all of them must be right then.
      if (mismatches.count === 0 && bench.cq.length > completions) compareMemory(everything, `after completion-queue entry ${completions}, memory`);
    }
    postUpTo(Number.MAX_SAFE_INTEGER);
    bench.settle('the end of the scenario');
    drain();
    traceStep([], []);
    for (const cls of ['response', 'request'] as const) if (got[cls] !== expectedOut[cls].length) miss(`${cls} ULPDU count`, String(expectedOut[cls].length), String(got[cls]));
    // In the model's trace, what it sent that the RTL did not (framed on from where the RTL stopped).
    for (const cls of ['response', 'request'] as const) for (const u of expectedOut[cls].slice(got[cls])) txSeq = (txSeq + traceModelOut(u, txSeq)) >>> 0;

    // Completion queue against the responder's events; protection; every buffer and region.
    const events = model.events.filter((e) => e.side === 'responder').map(modelEvent).filter((x): x is string => x !== null);
    const rtlEvents = bench.cq.filter((e) => !e.sent);
    events.forEach((e, i) => rtlEvents[i]?.text !== e && miss(`completion-queue entry ${i}`, e, rtlEvents[i]?.text ?? '(none)', rtlEvents[i] ? { cycle: rtlEvents[i]!.cycle } : {}));
    if (rtlEvents.length > events.length) miss(`completion-queue entry ${events.length}`, '(none)', rtlEvents[events.length]!.text, { cycle: rtlEvents[events.length]!.cycle });
    const placements = model.events.flatMap((e) => (e.type === 'placement' && e.side === 'responder' ? [{ lo: e.address, hi: e.address + BigInt(e.length) }] : []));
    for (const w of bench.mem.writes) {
      const span = writtenSpan(w, W);
      if (!span) continue;
      const { lo: a0, hi: a1 } = span;
      if (!placements.some((p) => a0 >= p.lo && a1 < p.hi) && violations.push(`cycle ${w.cycle}: write of 0x${a0.toString(16)}..0x${a1.toString(16)} outside every placement of the model`) >= 20) break;
    }
    compareMemory(everything, 'at the end, memory');
    violations.push(...bench.mem.faults.map((f) => `memory port: ${f}`), ...bench.broken);
  }
  const time = timer.stop();
  bench.close();
  const failed = mismatches.count > 0 || violations.length > 0;
  const evidence = opts.evidenceDir && failed ? log.write(opts.evidenceDir, 'responder', modelSent, mismatches.first) : [];
  const module = `rnic_top_w${W}`;
  const traceFiles =
    traces && traceDir !== undefined && (opts.traceDir !== undefined || failed)
      ? writeTraces(traceDir, `${module}-scenario-seed${opts.seed}`, { module, seed: opts.seed, scenario: s.name ?? '(unnamed)' }, traces)
      : [];
  return {
    dut: 'rnic',
    scenario: s.name ?? '(unnamed)',
    module,
    seed: opts.seed,
    ops: s.ops.length,
    packets: fpdusIn + fpdusOut,
    fpdusIn,
    fpdusOut,
    workRequests,
    events: model.events.filter((e) => e.side === 'responder').length,
    memoryChecks,
    mismatches: mismatches.count,
    violations: violations.length,
    firstMismatch: mismatches.first ?? null,
    firstViolation: violations[0] ?? null,
    cycles: time.cycles,
    simCyclesPerSecond: time.simCyclesPerSecond,
    evidence,
    traces: traceFiles,
  };
}
