import { errBits } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { TAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { encodeDdpSegment } from '../../ts-model/ddp/header';
import { MpaDeframer, MpaFramer } from '../../ts-model/mpa';
import { Opcode, OPCODE_NAMES, rdmapControl } from '../../ts-model/rdmap/constants';
import { RdmapError } from '../../ts-model/terminate-codes';
import { hex } from '../../ts-model/util/hex';
import { prng } from '../../ts-model/util/prng';
import { never } from '../cocotb/pause';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { modelEvent } from './events';
import { RxCounts } from './rx-counts';
import { faultyWire, opcodeName, taggedPayload, tcpSegments } from './peer-wire';
import { RxBench, openRx } from './rx-bench';
import { FaultTurns, RxPeer, newSideEffects, type RtlRegion, type StepSideEffects } from './rx-peer';
import { firstMemoryDifference, memoryMismatch } from './scoreboard';

/**
 * Co-simulation of the receive path `ddp_rx_w<W>` (hdl-gen/blocks/ddp-rx.ts) against the model
 * endpoint (ts-model/rnic/endpoint.ts), ULPDU by ULPDU.
 *
 * Episodes: each is one stream (one QP) from reset. The RTL's STag table and the model's get the
 * same regions, host memory starts with the same random contents, and the peer model
 * (sim/cosim/rx-peer.ts) sends valid traffic of every opcode, sometimes a fault. Every peer ULPDU
 * goes into the RTL (s_axis, random gaps) and into the model; after the RTL has settled:
 * - events (completions, Terminate sent/received, closure) are compared one by one;
 * - the response ULPDUs on m_axis (Read Responses, Atomic Responses, the Terminate) are compared
 *   octet for octet with the model's;
 * - host memory is compared over every region and receive buffer;
 * - protection: every octet the RTL wrote must lie in a placement the model made in this
 *   episode and inside a region or receive buffer the stream may write; anything else is a
 *   violation (the JSON's `violations`).
 * An episode ends a few ULPDUs after the first error (which must all be dropped).
 */

export interface RxCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  /** Peer messages to send (valid and faulty), over all episodes. */
  readonly messages: number;
  /** Probability that a message is a fault (ends its episode). */
  readonly faults: number;
  /**
   * Run `rnic_rx_w<W>` (mpa_rx in front of ddp_rx) instead: every ULPDU is framed by the model's
   * MpaFramer (markers and CRC as each stream draws them), sent as TCP payload in random segments,
   * and the model's MpaDeframer decides what the model endpoint receives. MPA faults corrupt the
   * CRC or a marker on the wire.
   */
  readonly mpa?: boolean;
  /** Go on with the next episode after a mismatch (to count violations of a broken RTL); default: stop. */
  readonly keepGoing?: boolean;
  /** Per-cycle back-pressure probability on the memory ports, m_axis and m_evt (default 0.2). */
  readonly backpressure?: number;
  /** Back-pressure of the memory write port alone (default: `backpressure`). */
  readonly writeBackpressure?: number;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface RxMismatch {
  readonly episode: number;
  readonly ulpdu: number;
  /**
   * The cycle of the first divergence: when the RTL raised the differing event, sent the differing
   * response or wrote the wrong octet; for something it never did, the cycle it was found missing by.
   */
  readonly cycle: number;
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
}

export interface RxCosimResult {
  readonly dut: string;
  readonly width: number;
  readonly seed: number;
  /** With `mpa`: FPDUs on the wire (markers and CRC per stream). */
  readonly fpdus: number;
  readonly messages: number;
  readonly episodes: number;
  readonly ulpdus: number;
  readonly payloadBytes: number;
  readonly events: number;
  readonly responses: number;
  readonly mismatches: number;
  readonly violations: number;
  readonly firstMismatch: RxMismatch | null;
  readonly firstViolation: string | null;
  /** Error codes raised (model names), with counts; and the codes of the spec never raised. */
  readonly errorsHit: Record<string, number>;
  readonly errorsMissed: string[];
  readonly opcodes: Record<string, number>;
  readonly coverage: Record<string, number>;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
}

const MAX_PEER_MULPDU = 8000;

const u8eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

export function cosimRx(opts: RxCosimOptions): RxCosimResult {
  const W = opts.width;
  const r = prng(opts.seed);
  const dut = `${opts.mpa ? 'rnic_rx' : 'ddp_rx'}_w${W}`;
  const model = openRx(
    W,
    { ...dutSelection(opts), ...(opts.mutate && { mutateModule: opts.mutateModule ?? dut }) },
    opts.mpa,
  );
  // The STag table the generated block has (the configuration's stagDepth).
  const stagDepth = 1 << model.handle('stag_cfg_index').width;
  let fpdus = 0;
  const bp = opts.backpressure ?? 0.2;
  const bench = new RxBench(model, W, r, bp);
  if (opts.writeBackpressure !== undefined) bench.wrPause.p = opts.writeBackpressure;
  const counts = new RxCounts<RxMismatch>();
  const { mismatches, violations } = counts;
  const cov = (k: string) => counts.cov(k);
  let episodes = 0;
  let ulpdus = 0;
  let responsesCompared = 0;
  let sent = 0;
  const faultTurns = new FaultTurns(r);
  const timer = bench.timer();

  const clean = () => counts.clean;
  while (sent < opts.messages && (opts.keepGoing || clean())) {
    episodes++;
    const badBefore = mismatches.count + violations.count;
    const episode = episodes;
    const ird = r.int(1, 6);
    const cfg = {
      pd: r.int(0, 0xfffe),
      ird,
      msn: r.bool(0.3) ? (0x1_0000_0000 - r.int(1, 4)) >>> 0 : 1,
      mulpdu: r.pick([100, 200, 1460, 4110, 9000]),
      bigEndian: r.bool(),
    };
    if (cfg.msn !== 1) cov('msn-near-wrap');
    // The MPA layer of this stream (mpa mode): S0 anywhere, the first octet 4-aligned to it.
    const s0 = r.u32();
    const mpaCfg = opts.mpa ? { s0, seq: (s0 + 4 * r.int(0, 3000)) >>> 0, markers: r.bool(0.6), crc: r.bool(0.8) } : undefined;
    const framer = mpaCfg ? new MpaFramer(mpaCfg) : null;
    const deframer = mpaCfg ? new MpaDeframer(mpaCfg) : null;
    const peerMulpdu = r.pick([100, 300, 1460, 4110, MAX_PEER_MULPDU]);
    const peer = new RxPeer(r, { pd: cfg.pd, ird: cfg.ird, initialMsn: cfg.msn, peerMulpdu, localMulpdu: cfg.mulpdu, bigEndian: cfg.bigEndian, stagDepth });
    bench.configure({ ...cfg, ...(mpaCfg ? { mpa: mpaCfg } : {}) });
    bench.mem.clear();
    for (const g of peer.regions) {
      bench.stagCfg.push(g);
      const init = peer.localRnic.memory.read(g.base, Number(g.length));
      bench.mem.memory.write(g.base, init);
    }
    bench.mem.writes.length = 0;
    bench.events.length = 0;
    bench.settle('programming the STag table');
    const allowed: { lo: bigint; hi: bigint }[] = [];
    const expectedTx: Uint8Array[] = [];
    let modelEvents = 0;
    let rtlTx = 0;
    let failed = false;
    let afterFail = 0;
    let checkedWrites = 0;
    let index = 0;
    /** A difference at `cycle` (default: now, for something the RTL has not done by now). */
    const miss = (what: string, expected: string, actual: string, cycle = model.cycles) => mismatches.add({ episode, ulpdu: index, cycle, what, expected, actual });
    const violate = (s: string) => violations.add(`episode ${episode}, ULPDU ${index}: ${s}`);
    /** Writable memory of this stream: its PD's regions with a write right, and posted buffers. */
    const writable = (a: bigint) =>
      peer.regions.some((g) => g.pd === cfg.pd && (g.access.includes('remote-write') || g.access.includes('local-write') || g.access.includes('remote-atomic')) && a >= g.base && a < g.base + g.length) ||
      peer.ranges.some((b) => a >= b.addr && a < b.addr + BigInt(b.len) && !peer.regions.some((g) => g.base === b.addr));

    const pullModel = () => {
      const outs = peer.local.pull();
      for (const o of outs) {
        o.onSent?.();
        expectedTx.push(o.ulpdu);
      }
      peer.deliverToPeer(outs.map((o) => o.ulpdu));
    };

    const placedNow: { addr: bigint; len: number }[] = [];
    let writesCompared = 0;
    const compare = (whole = false) => {
      // Events, one by one.
      const mine = peer.localEvents.map(modelEvent);
      for (const e of peer.localEvents.splice(0)) {
        if (e.type === 'placement') {
          allowed.push({ lo: e.address, hi: e.address + BigInt(e.length) });
          placedNow.push({ addr: e.address, len: e.length });
        }
        if (e.type === 'terminate-sent') {
          counts.error(e.name);
          failed = true;
        }
        if (e.type === 'terminate-received') {
          cov('terminate-received');
          failed = true;
        }
        if (e.type === 'closed') {
          cov('closed');
          failed = true;
        }
        if (e.type === 'completion' && e.status === 'success') cov(`completion ${e.kind}${e.invalidatedStag !== undefined ? ' invalidate' : ''}`);
      }
      const expected = mine.filter((x): x is string => x !== null);
      const got = bench.events.slice(modelEvents, modelEvents + expected.length);
      for (let i = 0; i < expected.length; i++) {
        if (got[i]?.text !== expected[i]) miss(`event ${modelEvents + i}`, expected[i]!, got[i]?.text ?? '(none)', got[i]?.cycle);
      }
      modelEvents += expected.length;
      counts.events += expected.length;
      const extra = bench.events[modelEvents];
      if (extra) miss(`event ${modelEvents}`, '(none)', extra.text, extra.cycle);
      // Responses and the Terminate, octet for octet.
      for (;;) {
        const f = bench.mAxis.recv();
        if (!f) break;
        const want = expectedTx[rtlTx];
        if (!want) miss(`response ULPDU ${rtlTx}`, '(none)', hex(f.data), f.cycle);
        else if (!u8eq(want, f.data)) {
          let k = 0;
          while (want[k] === f.data[k]) k++;
          const around = (b: Uint8Array) => `${k > 16 ? '…' : ''}${hex(b.subarray(Math.max(0, k - 16), k + 32))}${b.length > k + 32 ? '…' : ''} (${b.length} octets)`;
          miss(`response ULPDU ${rtlTx} (${OPCODE_NAMES[want[1]! & 0xf]}), first difference at octet ${k}`, around(want), around(f.data), f.cycle);
        }
        rtlTx++;
        responsesCompared++;
      }
      // Protection: every octet written inside a placement of the model and writable memory.
      for (; checkedWrites < bench.mem.writes.length; checkedWrites++) {
        const w = bench.mem.writes[checkedWrites]!;
        let lo = -1;
        let hi = -1;
        for (let j = 0; j < W; j++) if ((w.strb >> BigInt(j)) & 1n) (lo < 0 && (lo = j), (hi = j));
        const a0 = w.addr + BigInt(lo);
        const a1 = w.addr + BigInt(hi);
        if (!allowed.some((p) => a0 >= p.lo && a1 < p.hi)) violate(`write of octets 0x${a0.toString(16)}..0x${a1.toString(16)} outside every placement of the model`);
        else if (!writable(a0) || !writable(a1)) violate(`write of 0x${a0.toString(16)}..0x${a1.toString(16)} outside the stream's writable memory`);
      }
      // Memory: where either side wrote since the last comparison (the model's placements, the
      // RTL's write beats); the whole of every region and buffer at the end of the stream.
      const spans = whole ? peer.ranges : [...placedNow, ...bench.mem.writes.slice(writesCompared).map((w) => ({ addr: w.addr, len: W }))];
      placedNow.length = 0;
      writesCompared = bench.mem.writes.length;
      const d = firstMemoryDifference(spans, (a, n) => peer.localRnic.memory.read(a, n), (a, n) => bench.mem.memory.read(a, n), bench.mem.writes, W);
      if (d) {
        const mm = memoryMismatch(d, 'memory', model.cycles);
        miss(mm.what, mm.expected, mm.actual, mm.cycle);
      }
      for (const f of bench.mem.faults.splice(0)) violate(`memory port: ${f}`);
      for (const b of bench.broken.splice(0)) violate(b);
    };

    /**
     * Feeds ULPDUs back to back (no gap beyond the source's random pauses), lets the RTL settle,
     * gives them to the model in the same order and compares. One at a time for faults, so that a
     * mismatch names its ULPDU; a valid message's segments go in as one burst.
     */
    const feed = (...batch: Uint8Array[]) => {
      // MPA's verdict: tuser 1 on tlast when the FPDU passed; otherwise s_llp_err holds the code.
      const mpaError = pendingMpaError;
      pendingMpaError = null;
      // What the model's MPA layer makes of each ULPDU (mpa mode): delivered, or the stream's error.
      const modelSees: ({ ulpdu: Uint8Array } | { error: number })[] = [];
      if (!framer) bench.llpError(mpaError ?? 0);
      const tuser = mpaError === null ? 1 : 0;
      for (const [i, u] of batch.entries()) {
        index++;
        ulpdus++;
        const op = u.length >= 2 ? u[1]! & 0xf : -1;
        const name = opcodeName(u);
        counts.opcode(name);
        counts.payloadBytes += taggedPayload(u);
        if ((op === Opcode.WRITE || op === Opcode.READ_RESPONSE) && u.length === TAGGED_HEADER_SIZE) cov('zero-length tagged');
        if (op >= Opcode.SEND && op <= Opcode.SEND_SE_INVALIDATE && u.length === 18) cov('zero-length send');
        // RX_DEBUG=1: one line per ULPDU on stderr, to find the one a mismatch report names.
        if (process.env.RX_DEBUG) console.error(`stream ${episode} ULPDU ${index}: ${name}, ${u.length} octets, ${hex(u.subarray(0, 18))}`);
        // A zero-length ULPDU is one beat with tkeep 0 (as mpa_rx sends it).
        if (framer && deframer) {
          const f = framer.frame(u);
          fpdus++;
          const wire = faultyWire(f, i === 0 ? mpaError : null, mpaCfg!.crc, r);
          for (const e of deframer.push(wire)) modelSees.push(e.kind === 'fpdu' ? { ulpdu: e.ulpdu } : { error: e.code });
          for (const seg of tcpSegments(wire, r, W)) bench.sAxis.send(seg);
        } else {
          modelSees.push(mpaError === null ? { ulpdu: u } : { error: mpaError });
          if (u.length === 0) bench.sAxis.sendBeats([{ data: new Uint8Array(W), tkeep: 0, tlast: true, tuser }]);
          else bench.sAxis.send(u, tuser);
        }
      }
      if (batch.length > 1) cov('back-to-back ULPDUs');
      bench.settle(`ULPDU ${index}`);
      for (const s of modelSees) {
        if ('ulpdu' in s) peer.local.receive(s.ulpdu);
        else peer.local.llpError(s.error, 'MPA failed the FPDU');
      }
      if (bench.irrqUsed === 0) pullModel();
      compare();
    };

    let pendingMpaError: number | null = null;
    const applyFx = (fx: StepSideEffects) => {
      bench.recv.push(...fx.recv);
      // Receive buffers start with the model's random contents too.
      for (const b of fx.recv) bench.mem.memory.write(b.addr, peer.localRnic.memory.read(b.addr, b.len));
      bench.orq.push(...fx.orq);
      // A request's ORQ entry is written before the request goes out (the requester's order), so
      // before any response to it can arrive: taken before the peer's ULPDUs are fed.
      if (fx.orq.length) bench.until(() => bench.orq.idle, 100 + 10 * fx.orq.length, 'the ORQ entries to be taken');
    };

    let steps = 0;
    const budget = r.int(1, 60);
    while (steps < budget && sent < opts.messages && mismatches.count + violations.count === badBefore) {
      steps++;
      sent++;
      opts.onProgress?.(sent, opts.messages);
      const fx = newSideEffects();
      let us: Uint8Array[] | null = null;
      if (!failed && r.bool(opts.faults)) {
        fx.burst = false;
        const kind = faultTurns.next();
        us = peer.fault(kind, fx, Math.min(peerMulpdu * 3, 20000));
        if (us) cov(`fault ${kind}`);
      }
      us ??= peer.valid(fx, Math.min(peerMulpdu * 3, 20000));
      applyFx(fx);
      pendingMpaError = fx.mpaError;
      if (fx.inject) {
        const e = RdmapError.GLOBAL_CATASTROPHIC;
        peer.local.injectFailure(e);
        bench.injectNext(Number(errBits(e)));
      }
      if (fx.abort) {
        bench.abort();
        peer.local.abort('the ULP aborts');
        bench.settle('abort');
        pullModel();
        compare();
      }
      if (fx.blockTx) bench.blockTx(true);
      if (fx.burst && !failed) feed(...us);
      else {
        for (const u of us) {
          feed(u);
          if (failed) afterFail++;
          if (afterFail > 3) break;
        }
      }
      if (fx.blockTx) {
        bench.blockTx(false);
        bench.settle('unblocking m_axis');
        if (bench.irrqUsed === 0) pullModel();
        compare();
      }
      if (failed && afterFail > 0) {
        // Nothing after the first error may change anything: two more valid messages.
        for (let k = 0; k < 2; k++) {
          const fx2 = newSideEffects();
          const more = peer.valid(fx2, 256);
          applyFx(fx2);
          feed(...more);
        }
        break;
      }
    }
    bench.settle('the end of the episode');
    if (bench.irrqUsed === 0) pullModel();
    compare(true);
    if (rtlTx !== expectedTx.length) miss('response count', String(expectedTx.length), String(rtlTx));
    if (bench.events.length !== modelEvents) miss('event count', String(modelEvents), String(bench.events.length));
  }
  const time = timer.stop();
  bench.close();
  return {
    dut,
    width: W,
    seed: opts.seed,
    fpdus,
    messages: sent,
    episodes,
    ulpdus,
    payloadBytes: counts.payloadBytes,
    events: counts.events,
    responses: responsesCompared,
    ...counts.result(),
    cycles: time.cycles,
    simCyclesPerSecond: time.simCyclesPerSecond,
  };
}

/**
 * Placement rate: `count` back-to-back RDMA Write ULPDUs of `ulpduBytes` octets into one region at
 * W-aligned TOs, no back-pressure anywhere. Store and forward makes the first write wait for the
 * whole first ULPDU (`latency`, cycles from its first input beat); after that the rate is the
 * steady state: `efficiency` = payload octets / (cycles from the first write to the last × W), and
 * `bound` = payload octets / (input beats × W), what the ULPDUs' own headers leave.
 */
export function measureRxPlacement(width: number, ulpduBytes = 4096, count = 64, rtlDir?: string): { latency: number; cyclesPerUlpdu: number; payloadBytes: number; efficiency: number; bound: number } {
  const W = width;
  const model = openRx(W, rtlDir ? { rtlDir } : {});
  const r = prng(0x5eed);
  const bench = new RxBench(model, W, r, 0);
  bench.sAxis.setPause(never());
  bench.configure({ pd: 7, ird: 4, msn: 1, mulpdu: 9000, bigEndian: false });
  const payload = ulpduBytes - TAGGED_HEADER_SIZE;
  const stride = Math.ceil(payload / W) * W;
  const region: RtlRegion = { stag: 0x0142, pd: 7, base: 0x10000000n, length: BigInt(stride * count), access: ['remote-write'], va: false, invalidatable: false };
  bench.stagCfg.push(region);
  bench.settle('programming the STag table');
  for (let i = 0; i < count; i++) {
    bench.sAxis.send(encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: rdmapControl(Opcode.WRITE), stag: region.stag, to: BigInt(i * stride) }, r.bytes(payload)), 1);
  }
  const sAxis = { valid: model.handle('s_axis_tvalid'), ready: model.handle('s_axis_tready') };
  let firstBeat = -1;
  bench.until(() => {
    if (firstBeat < 0 && model.peekNumber(sAxis.valid) === 1 && model.peekNumber(sAxis.ready) === 1) firstBeat = model.cycles;
    return bench.sAxis.idle && bench.mem.writes.length > 0 && model.peekNumber(model.handle('rx_idle')) === 1;
  }, 10_000_000, 'the Writes to be placed');
  const writes = bench.mem.writes;
  const first = writes[0]!.cycle;
  const last = writes[writes.length - 1]!.cycle;
  model.close();
  const payloadBytes = payload * count;
  const window = last - first + 1;
  return {
    latency: first - firstBeat,
    cyclesPerUlpdu: window / count,
    payloadBytes,
    efficiency: payloadBytes / (window * W),
    bound: payload / (Math.ceil(ulpduBytes / W) * W),
  };
}
