import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { stagIndex } from '../../ts-model/memory/stag';
import { mulpdu } from '../../ts-model/mpa/mulpdu';
import { MpaDeframer, MpaFramer } from '../../ts-model/mpa';
import { OPCODE_NAMES, Opcode } from '../../ts-model/rdmap/constants';
import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import type { Scenario } from '../../ts-model/scenario/schema';
import { runScenario } from '../../ts-model/scenario/run';
import { hex } from '../../ts-model/util/hex';
import { prng } from '../../ts-model/util/prng';
import type { DutOptions } from './dut';
import { TopBench, isResponse, openTop, type QpConfig, type RnicMismatch } from './rnic';
import { modelEvent } from './rx';
import type { LocalWr } from './rx-peer';
import { describeUlpdu, sideBySide } from './ulpdu-text';
import { WireLog } from './wire-log';

/**
 * A scenario file (the one `rnic run` runs on the model) co-simulated with the RTL as the
 * responder, on QP 0 of rnic_top_w<W>. The model runs the scenario first; then the RTL gets what
 * the model's responder got: its regions in the STag table, its receive buffers, its work requests
 * (in op order, each before the initiator's FPDUs of later ops), and every FPDU the initiator sent
 * after the MPA Reply (the RTR among them), as TCP payload in random segments. Compared: every
 * FPDU the RTL sends (framing octet for octet at the responder's sequence numbers; ULPDUs per
 * queue against the model's responder), every completion-queue entry against the responder's
 * events, protection, and the responder's regions at the end.
 *
 * The RTL has one markers and one CRC setting per connection: a scenario that negotiates markers
 * in one direction only is refused, as are faults that act inside the responder (an RNIC failure,
 * withdrawn receive buffers), a lost TCP connection, an abort by the responder, and STags beyond
 * the RTL's table.
 */
export interface ScenarioCosimOptions {
  readonly width: number;
  readonly seed: number;
  readonly rtlDir?: string;
  readonly vcd?: string;
  readonly config?: DutOptions['config'];
  readonly evidenceDir?: string;
}

export interface ScenarioCosimResult {
  readonly dut: 'rnic';
  readonly scenario: string;
  readonly module: string;
  readonly seed: number;
  readonly ops: number;
  readonly packets: number;
  readonly fpdusIn: number;
  readonly fpdusOut: number;
  readonly workRequests: number;
  readonly events: number;
  readonly mismatches: number;
  readonly violations: number;
  readonly firstMismatch: RnicMismatch | null;
  readonly firstViolation: string | null;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
  readonly evidence: string[];
}

/** Host memory for the responder's Write and Send data, away from its regions. */
const SOURCE_BASE = 0x7000_0000_0000n;

export function cosimScenario(s: Scenario, opts: ScenarioCosimOptions): ScenarioCosimResult {
  const refuse = (why: string): never => {
    throw new Error(`scenario '${s.name}' cannot run on the RTL: ${why}`);
  };
  for (const f of s.faults) {
    if ('op' in f && (f.kind === 'rnic-failure' || f.kind === 'no-receive-buffer') && s.ops[f.op]?.from === 'initiator') refuse(`faults[].kind '${f.kind}' acts inside the responder`);
    // The RTL sits above TCP: a lost connection is the TCP layer's news, not an input it has.
    if ('op' in f && f.kind === 'connection-lost') refuse("faults[].kind 'connection-lost' (the RTL has no TCP-closed input)");
  }
  if (s.ops.some((o) => o.op === 'abort' && o.from === 'responder')) refuse("ops[].op 'abort' from the responder");
  const model = runScenario(s);
  const conn = model.link.connection;
  const rx = conn.initiatorToResponder;
  const tx = conn.responderToInitiator;
  if (model.link.established && rx.markers !== tx.markers) refuse(`markers in one direction only (connection.initiator.markers / connection.responder.markers): the RTL has one setting per connection`);

  const depth = opts.config?.stagDepth ?? DEFAULT_CONFIG.stagDepth;
  for (const g of model.rnics.responder.stags.regions()) {
    if (stagIndex(g.stag) >= depth) refuse(`regions[] STag 0x${g.stag.toString(16)} has index ${stagIndex(g.stag)}; the RTL's STag table (stagDepth ${depth}) holds 0..${depth - 1}: give --config a larger stagDepth`);
  }
  const W = opts.width;
  const r = prng(opts.seed);
  const dut = openTop(W, { ...(opts.rtlDir && { rtlDir: opts.rtlDir }), ...(opts.vcd && { vcd: opts.vcd }), ...(opts.config && { config: opts.config }) });
  const bench = new TopBench(dut, W, r, 0.2);
  const mismatches: RnicMismatch[] = [];
  let mismatchCount = 0;
  const violations: string[] = [];
  const miss = (what: string, expected: string, actual: string, side?: string) => {
    mismatchCount++;
    if (mismatches.length < 20) mismatches.push({ qp: 0, stream: 1, op: -1, what, expected, actual, ...(side ? { sideBySide: side } : {}) });
  };
  const t0 = performance.now();
  const c0 = dut.cycles;
  const log = new WireLog(rx.s0, tx.s0, tx);
  const responder = model.rnics.responder;
  const modelSent: Uint8Array[] = [];
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
      bigEndian: s.options.rdmap.hostMemoryEndian === 'big',
      mpa: { s0: rx.s0, seq: rx.s0, rxSeq: rx.s0, txS0: tx.s0, txSeq: tx.s0, markers: rx.markers, crc: conn.crc },
    };
    bench.cfg.queue.push({ qp: 0, c: cfg });
    bench.settle('configuring QP 0');
    for (const g of responder.stags.regions()) {
      bench.stagCfg.queue.push({ qp: 0, g: { stag: g.stag, pd: g.pd, base: g.base, length: g.length, access: [...g.access], va: g.addressing === 'va', invalidatable: g.invalidatable } });
    }
    // The responder's receive buffers, where the model put them, in its order.
    for (const b of model.buffers) if (b.at === 'responder') bench.recv.queue.push({ qp: 0, addr: b.addr, len: b.length });
    bench.settle('programming the STag table');

    // What the responder sent, deframed: the model's ULPDUs per queue; Atomic Request IDs in order.
    const outDeframer = new MpaDeframer(tx);
    for (const g of model.segments) if (g.from === 'responder' && g.kind === 'fpdu') for (const e of outDeframer.push(g.payload)) if (e.kind === 'fpdu') modelSent.push(e.ulpdu);
    const expected = { response: modelSent.filter(isResponse), request: modelSent.filter((u) => !isResponse(u)) };
    const atomicIds = expected.request.filter((u) => (u[1]! & 0xf) === Opcode.ATOMIC_REQUEST && u.length >= UNTAGGED_HEADER_SIZE + 8).map((u) => new DataView(u.buffer, u.byteOffset + UNTAGGED_HEADER_SIZE).getUint32(4));
    const got = { response: 0, request: 0 };
    const txDeframer = new MpaDeframer(tx);
    const txFramer = new MpaFramer(tx);
    const drain = () => {
      for (let f = bench.tx.recv(); f; f = bench.tx.recv()) {
        fpdusOut++;
        log.out(f.data);
        const us = txDeframer.push(f.data);
        const u = us.length === 1 && us[0]!.kind === 'fpdu' ? us[0]!.ulpdu : null;
        if (!u) {
          miss('an FPDU the RTL sent', 'one valid FPDU', `${hex(f.data.subarray(0, 32))}…`);
          continue;
        }
        const want = txFramer.frame(u).wire;
        if (Buffer.compare(want, f.data) !== 0) miss('FPDU framing', hex(want.subarray(0, 48)), hex(f.data.subarray(0, 48)));
        const cls = isResponse(u) ? 'response' : 'request';
        const exp = expected[cls][got[cls]++];
        if (!exp) miss(`${cls} ULPDU ${got[cls] - 1} (${OPCODE_NAMES[u[1]! & 0xf]})`, '(none)', describeUlpdu(u));
        else if (Buffer.compare(exp, u) !== 0) miss(`${cls} ULPDU ${got[cls] - 1}`, describeUlpdu(exp), describeUlpdu(u), sideBySide(exp, u));
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
        bench.wr.queue.push({ qp: 0, w });
        workRequests++;
        any = true;
      }
      if (any) {
        bench.settle('work requests');
        drain();
      }
    };
    for (const g of model.segments) {
      if (g.from !== 'initiator' || g.kind !== 'fpdu') continue;
      postUpTo(g.op ?? -1);
      fpdusIn++;
      log.in(g.payload);
      for (let at = 0; at < g.payload.length; ) {
        const n = Math.min(g.payload.length - at, r.int(1, 4 * W));
        bench.source.send(g.payload.subarray(at, at + n), 0);
        at += n;
      }
      bench.settle(`the initiator's FPDU of op ${g.op ?? '(none)'}`);
      drain();
    }
    postUpTo(Number.MAX_SAFE_INTEGER);
    bench.settle('the end of the scenario');
    drain();
    for (const cls of ['response', 'request'] as const) if (got[cls] !== expected[cls].length) miss(`${cls} ULPDU count`, String(expected[cls].length), String(got[cls]));

    // Completion queue against the responder's events; protection; the regions.
    const events = model.events.filter((e) => e.side === 'responder').map(modelEvent).filter((x): x is string => x !== null);
    const rtlEvents = bench.cq.filter((e) => !e.sent).map((e) => e.text);
    events.forEach((e, i) => rtlEvents[i] !== e && miss(`completion-queue entry ${i}`, e, rtlEvents[i] ?? '(none)'));
    if (rtlEvents.length > events.length) miss(`completion-queue entry ${events.length}`, '(none)', rtlEvents[events.length]!);
    const placed = model.events.flatMap((e) => (e.type === 'placement' && e.side === 'responder' ? [{ lo: e.address, hi: e.address + BigInt(e.length) }] : []));
    for (const w of bench.mem.writes) {
      const lanes = [...Array(W).keys()].filter((j) => (w.strb >> BigInt(j)) & 1n);
      if (!lanes.length) continue;
      const a0 = w.addr + BigInt(lanes[0]!);
      const a1 = w.addr + BigInt(lanes[lanes.length - 1]!);
      if (!placed.some((p) => a0 >= p.lo && a1 < p.hi) && violations.push(`write of 0x${a0.toString(16)}..0x${a1.toString(16)} outside every placement of the model`) >= 20) break;
    }
    for (const g of responder.stags.regions()) {
      const want = responder.memory.read(g.base, Number(g.length));
      const have = bench.mem.memory.read(g.base, Number(g.length));
      if (Buffer.compare(want, have) !== 0) {
        let k = 0;
        while (want[k] === have[k]) k++;
        miss(`responder region 0x${g.stag.toString(16)} at 0x${(g.base + BigInt(k)).toString(16)}`, hex(want.subarray(k, k + 16)), hex(have.subarray(k, k + 16)));
      }
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const cycles = dut.cycles - c0;
  dut.close();
  const evidence = opts.evidenceDir && (mismatchCount || violations.length) ? log.write(opts.evidenceDir, 'responder', modelSent) : [];
  return {
    dut: 'rnic',
    scenario: s.name ?? '(unnamed)',
    module: `rnic_top_w${W}`,
    seed: opts.seed,
    ops: s.ops.length,
    packets: fpdusIn + fpdusOut,
    fpdusIn,
    fpdusOut,
    workRequests,
    events: model.events.filter((e) => e.side === 'responder').length,
    mismatches: mismatchCount,
    violations: violations.length,
    firstMismatch: mismatches[0] ?? null,
    firstViolation: violations[0] ?? null,
    cycles,
    simCyclesPerSecond: Math.round(cycles / Math.max(seconds, 1e-9)),
    evidence,
  };
}

