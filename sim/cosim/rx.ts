import { RX_EVENT } from '../../hdl-gen/blocks/ddp-rx-ctl';
import { errBits } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { TAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { encodeDdpSegment } from '../../ts-model/ddp/header';
import { MpaDeframer, MpaFramer, type MpaStreamConfig } from '../../ts-model/mpa';
import { IRD_ORD_NO_NEGOTIATE, MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import { corruptCrc, corruptMarker } from '../../ts-model/mpa/faults';
import { Opcode, OPCODE_NAMES, rdmapControl } from '../../ts-model/rdmap/constants';
import type { RnicEvent } from '../../ts-model/rnic/events';
import { ALL_ERROR_CODES, LlpError, RdmapError, formatErrorCode, type ErrorCode } from '../../ts-model/terminate-codes';
import { hex } from '../../ts-model/util/hex';
import { prng, type Prng } from '../../ts-model/util/prng';
import { random as randomPause, never } from '../cocotb/pause';
import { Testbench } from '../cocotb/testbench';
import { QueueSource } from '../cocotb/queue-source';
import type { AxisSink, AxisSource } from '../cocotb/axis';
import type { PortHandle, SimModel } from '../verilator/model';
import { dutSelection, openDut, type DutOptions, type DutSelection } from './dut';
import { HostMemoryPort } from './host-memory-port';
import { pokeStagEntry } from './stag-cfg';
import { FAULT_KINDS, RxPeer, type FaultKind, type RtlRegion, type StepSideEffects } from './rx-peer';

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
  readonly stagDepth?: number;
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

/** The receive-path error codes of spec/ddp-rdmap.md §9 (DDP and RDMAP), plus LLP 0x03 (H1/H6, or MPA's marker check) and 0x02 (MPA's CRC verdict). */
export const RX_ERROR_CODES: readonly ErrorCode[] = ALL_ERROR_CODES.filter((e) => e.layer !== 2 || e.code === 0x02 || e.code === 0x03);

const STAG_DEPTH = 256;
const MAX_PEER_MULPDU = 8000;

/** The model's events of the local side, as comparable strings (transmit-side completions left out). */
export function modelEvent(e: RnicEvent): string | null {
  switch (e.type) {
    case 'completion':
      if (e.status !== 'success') return null;
      switch (e.kind) {
        case 'recv':
          return `recv length=${e.length} se=${e.solicited ? 1 : 0} inv=${e.invalidatedStag !== undefined ? `0x${e.invalidatedStag.toString(16)}` : '-'}`;
        case 'recv-immediate':
          return `recv-immediate se=${e.solicited ? 1 : 0} data=${e.immediate}`;
        case 'read':
          return `read length=${e.length}`;
        case 'atomic':
          return `atomic value=0x${e.value!.toString(16)}`;
        default:
          return null;
      }
    case 'terminate-sent':
      return `terminate-sent ${formatErrorCode(e)}`;
    case 'terminate-received':
      return `terminate-received ${formatErrorCode(e)}`;
    case 'closed':
      return 'closed';
    default:
      return null;
  }
}

export interface RtlEventPorts {
  readonly valid: PortHandle;
  readonly ready: PortHandle;
  readonly kind: PortHandle;
  readonly length: PortHandle;
  readonly solicited: PortHandle;
  readonly invalidated: PortHandle;
  readonly stag: PortHandle;
  readonly data: PortHandle;
  readonly err: PortHandle;
}

export function rtlEvent(m: SimModel, p: RtlEventPorts): string {
  const kind = m.peekPreNumber(p.kind);
  const err = m.peekPreNumber(p.err);
  // {code, etype, layer} as errBits packs it (hdl-gen/blocks/ddp-rx-hdr.ts).
  const code = { layer: err & 3, etype: (err >> 2) & 0xf, code: err >> 6 };
  const data = m.peekPre(p.data);
  switch (kind) {
    case RX_EVENT.RECV:
      return `recv length=${m.peekPreNumber(p.length)} se=${m.peekPreNumber(p.solicited)} inv=${m.peekPreNumber(p.invalidated) ? `0x${m.peekPre(p.stag).toString(16)}` : '-'}`;
    case RX_EVENT.RECV_IMMEDIATE:
      return `recv-immediate se=${m.peekPreNumber(p.solicited)} data=${data.toString(16).padStart(16, '0')}`;
    case RX_EVENT.READ:
      return `read length=${m.peekPreNumber(p.length)}`;
    case RX_EVENT.ATOMIC:
      return `atomic value=0x${data.toString(16)}`;
    case RX_EVENT.TERMINATE_SENT:
      return `terminate-sent ${formatErrorCode(code)}`;
    case RX_EVENT.TERMINATE_RECEIVED:
      return `terminate-received ${formatErrorCode(code)}`;
    case RX_EVENT.CLOSED:
      return 'closed';
    default:
      return `unknown event kind ${kind}`;
  }
}

/** The Verilated ddp_rx_w<W> (or rnic_rx_w<W>, with mpa_rx in front), opened. */
export function openRx(width: number, opts: DutOptions = {}, mpa = false): SimModel {
  return openDut(`${mpa ? 'rnic_rx' : 'ddp_rx'}_w${width}`, opts).model;
}

/** The harness around one open DUT: drivers, monitors, memory. */
class RxBench {
  readonly tb: Testbench;
  readonly source: AxisSource;
  readonly tx: AxisSink;
  readonly mem: HostMemoryPort;
  readonly events: string[] = [];
  readonly stagCfg: QueueSource<RtlRegion>;
  readonly recv: QueueSource<{ addr: bigint; len: number }>;
  readonly orq: QueueSource<StepSideEffects['orq'][number]>;
  private readonly evt: RtlEventPorts;
  private readonly h: (n: string) => PortHandle;
  private evtPause: number;
  private txBlocked = false;
  private pulse: { inject: number | null; abort: boolean } = { inject: null, abort: false };

  constructor(
    readonly model: SimModel,
    readonly W: number,
    private readonly r: Prng,
    backpressure: number,
  ) {
    const m = model;
    this.h = (n: string) => m.handle(n);
    const h = this.h;
    this.tb = new Testbench(m);
    this.source = this.tb.source('s_axis', { pause: randomPause(r.u32(), backpressure) });
    this.tx = this.tb.sink('m_axis', { pause: randomPause(r.u32(), backpressure) });
    this.mem = this.tb.add(new HostMemoryPort(m, r, { width: this.W, wrPause: backpressure, rdPause: backpressure, maxLatency: 4 }));
    this.evtPause = backpressure;
    this.evt = {
      valid: h('m_evt_valid'), ready: h('m_evt_ready'), kind: h('m_evt_kind'), length: h('m_evt_length'), solicited: h('m_evt_solicited'),
      invalidated: h('m_evt_invalidated'), stag: h('m_evt_stag'), data: h('m_evt_data'), err: h('m_evt_err'),
    };
    this.stagCfg = this.tb.add(
      new QueueSource<RtlRegion>(m, h('stag_cfg_valid'), null, (g) => {
        pokeStagEntry(m, h, g);
      }),
    );
    this.recv = this.tb.add(
      new QueueSource(m, h('s_recv_valid'), h('s_recv_ready'), (b: { addr: bigint; len: number }) => {
        m.poke(h('s_recv_addr'), b.addr);
        m.pokeNumber(h('s_recv_len'), b.len);
      }),
    );
    this.orq = this.tb.add(
      new QueueSource(m, h('s_orq_valid'), h('s_orq_ready'), (o: StepSideEffects['orq'][number]) => {
        m.pokeNumber(h('s_orq_atomic'), o.atomic ? 1 : 0);
        m.pokeNumber(h('s_orq_stag'), o.stag);
        m.poke(h('s_orq_to'), o.to);
        m.pokeNumber(h('s_orq_size'), o.size);
        m.pokeNumber(h('s_orq_request_id'), o.requestId);
      }),
    );
    const self = this;
    this.tb.add({
      drive() {
        m.pokeNumber(self.evt.ready, self.evtPause > 0 && r.bool(self.evtPause) ? 0 : 1);
        m.pokeNumber(h('inject_valid'), self.pulse.inject !== null ? 1 : 0);
        m.pokeNumber(h('inject_err'), self.pulse.inject ?? 0);
        m.pokeNumber(h('abort_req'), self.pulse.abort ? 1 : 0);
        self.pulse = { inject: null, abort: false };
      },
      sample() {
        if (m.peekPreNumber(self.evt.valid) === 1 && m.peekPreNumber(self.evt.ready) === 1) self.events.push(rtlEvent(m, self.evt));
      },
    });
  }

  configure(c: { pd: number; ird: number; msn: number; mulpdu: number; bigEndian: boolean; mpa?: MpaStreamConfig & { seq: number } }): void {
    const m = this.model;
    const h = this.h;
    m.pokeNumber(h('cfg_rfc7306'), 1);
    m.pokeNumber(h('cfg_pd'), c.pd);
    m.pokeNumber(h('cfg_ird'), c.ird);
    m.pokeNumber(h('cfg_ord'), IRD_ORD_NO_NEGOTIATE); // the ORQ entries come from the model's requester, which keeps its ORD
    m.pokeNumber(h('cfg_initial_msn'), c.msn >>> 0);
    m.pokeNumber(h('cfg_mulpdu'), c.mulpdu);
    m.pokeNumber(h('cfg_big_endian'), c.bigEndian ? 1 : 0);
    for (const n of ['stag_cfg_valid', 's_recv_valid', 's_orq_valid', 'inject_valid', 'abort_req', 's_llp_err']) if (m.has(n)) m.pokeNumber(h(n), 0);
    if (c.mpa) {
      m.pokeNumber(h('mpa_cfg_markers'), c.mpa.markers ? 1 : 0);
      m.pokeNumber(h('mpa_cfg_crc'), c.mpa.crc ? 1 : 0);
      m.pokeNumber(h('mpa_cfg_s0'), c.mpa.s0 & 0x1ff);
      m.pokeNumber(h('mpa_cfg_seq'), c.mpa.seq & 0x1ff);
      m.pokeNumber(h('mpa_cfg_max_ulpdu'), MAX_ULPDU_LENGTH);
    }
    this.tb.reset();
  }

  /** s_llp_err: the LLP code that goes with a ULPDU whose tuser is 0. */
  llpError(code: number): void {
    this.model.pokeNumber(this.h('s_llp_err'), code);
  }

  injectNext(err: number): void {
    this.pulse.inject = err;
  }

  abort(): void {
    this.pulse.abort = true;
  }

  blockTx(on: boolean): void {
    this.txBlocked = on;
    this.tx.setPause(on ? { next: () => true } : never());
  }

  /** Runs until the RTL has nothing left to do (or, with m_axis blocked, nothing it can do). */
  settle(what: string): void {
    const m = this.model;
    const rxIdle = this.h('rx_idle');
    const idle = this.h('idle');
    let calm = 0;
    const writesBefore = { n: this.mem.writes.length };
    this.tb.until(() => {
      const quiet =
        this.source.idle && this.stagCfg.idle && this.recv.idle && this.orq.idle && this.mem.idle &&
        m.peekPreNumber(this.evt.valid) === 0 && m.peekPreNumber(rxIdle) === 1 &&
        (this.txBlocked || (m.peekPreNumber(idle) === 1 && m.peekPreNumber(this.h('m_axis_tvalid')) === 0)) &&
        this.mem.writes.length === writesBefore.n;
      writesBefore.n = this.mem.writes.length;
      calm = quiet ? calm + 1 : 0;
      return calm >= 8;
    }, 400_000, `the receive path to settle after ${what} (${this.status()})`);
  }

  /** The status ports, for a hang report. */
  status(): string {
    const m = this.model;
    const names = ['idle', 'rx_idle', 'irrq_used', 'rx_stopped', 'tx_stopped', 'm_axis_tvalid', 'm_axis_tready', 'm_evt_valid', 's_axis_tready', 'mem_rd_valid', 'mem_wr_valid'];
    return names.map((n) => `${n}=${m.peekNumber(this.h(n))}`).join(' ') + ` source=${this.source.idle ? 'idle' : 'busy'} mem=${this.mem.idle ? 'idle' : 'reading'} stag=${this.stagCfg.idle} recv=${this.recv.idle}/${this.recv.queue.length} orq=${this.orq.idle} txBlocked=${this.txBlocked}`;
  }

  get irrqUsed(): number {
    return this.model.peekNumber(this.h('irrq_used'));
  }
}

const u8eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

export function cosimRx(opts: RxCosimOptions): RxCosimResult {
  const W = opts.width;
  const stagDepth = opts.stagDepth ?? STAG_DEPTH;
  const r = prng(opts.seed);
  const dut = `${opts.mpa ? 'rnic_rx' : 'ddp_rx'}_w${W}`;
  const model = openRx(
    W,
    { ...dutSelection(opts), ...(opts.mutate && { mutateModule: opts.mutateModule ?? dut }) },
    opts.mpa,
  );
  let fpdus = 0;
  const bp = opts.backpressure ?? 0.2;
  const bench = new RxBench(model, W, r, bp);
  if (opts.writeBackpressure !== undefined) bench.mem.setPause(opts.writeBackpressure, bp);
  const mismatches: RxMismatch[] = [];
  let mismatchCount = 0;
  const violations: string[] = [];
  let violationCount = 0;
  const errorsHit: Record<string, number> = {};
  const opcodes: Record<string, number> = {};
  const coverage: Record<string, number> = {};
  const cov = (k: string) => (coverage[k] = (coverage[k] ?? 0) + 1);
  let episodes = 0;
  let ulpdus = 0;
  let payloadBytes = 0;
  let eventsCompared = 0;
  let responsesCompared = 0;
  let sent = 0;
  /** Faults take the kinds in turn (from a random start), so every kind comes up in a long run. */
  let nextFault = r.int(0, FAULT_KINDS.length - 1);
  const t0 = performance.now();
  const c0 = model.cycles;

  const clean = () => mismatchCount === 0 && violationCount === 0;
  while (sent < opts.messages && (opts.keepGoing || clean())) {
    episodes++;
    const badBefore = mismatchCount + violationCount;
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
      bench.stagCfg.queue.push(g);
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
    const miss = (what: string, expected: string, actual: string) => {
      mismatchCount++;
      if (mismatches.length < 20) mismatches.push({ episode, ulpdu: index, what, expected, actual });
    };
    const violate = (s: string) => {
      violationCount++;
      if (violations.length < 20) violations.push(`episode ${episode}, ULPDU ${index}: ${s}`);
    };
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
          errorsHit[e.name] = (errorsHit[e.name] ?? 0) + 1;
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
        if (got[i] !== expected[i]) miss(`event ${modelEvents + i}`, expected[i]!, got[i] ?? '(none)');
      }
      modelEvents += expected.length;
      eventsCompared += expected.length;
      if (bench.events.length > modelEvents) miss(`event ${modelEvents}`, '(none)', bench.events[modelEvents]!);
      // Responses and the Terminate, octet for octet.
      for (;;) {
        const f = bench.tx.recv();
        if (!f) break;
        const want = expectedTx[rtlTx];
        if (!want) miss(`response ULPDU ${rtlTx}`, '(none)', hex(f.data));
        else if (!u8eq(want, f.data)) {
          let k = 0;
          while (want[k] === f.data[k]) k++;
          const around = (b: Uint8Array) => `${k > 16 ? '…' : ''}${hex(b.subarray(Math.max(0, k - 16), k + 32))}${b.length > k + 32 ? '…' : ''} (${b.length} octets)`;
          miss(`response ULPDU ${rtlTx} (${OPCODE_NAMES[want[1]! & 0xf]}), first difference at octet ${k}`, around(want), around(f.data));
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
      for (const g of spans) {
        const want = peer.localRnic.memory.read(g.addr, g.len);
        const have = bench.mem.memory.read(g.addr, g.len);
        if (!u8eq(want, have)) {
          let k = 0;
          while (want[k] === have[k]) k++;
          miss(`memory at 0x${(g.addr + BigInt(k)).toString(16)}`, hex(want.subarray(k, k + 16)), hex(have.subarray(k, k + 16)));
          break;
        }
      }
      for (const f of bench.mem.faults.splice(0)) violate(`memory port: ${f}`);
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
        const name = op < 0 ? 'ULPDU shorter than 2 octets' : OPCODE_NAMES[op] ?? `undefined opcode 0x${op.toString(16)}`;
        opcodes[name] = (opcodes[name] ?? 0) + 1;
        if (u.length > TAGGED_HEADER_SIZE && (op === Opcode.WRITE || op === Opcode.READ_RESPONSE)) payloadBytes += u.length - TAGGED_HEADER_SIZE;
        if ((op === Opcode.WRITE || op === Opcode.READ_RESPONSE) && u.length === TAGGED_HEADER_SIZE) cov('zero-length tagged');
        if (op >= Opcode.SEND && op <= Opcode.SEND_SE_INVALIDATE && u.length === 18) cov('zero-length send');
        // RX_DEBUG=1: one line per ULPDU on stderr, to find the one a mismatch report names.
        if (process.env.RX_DEBUG) console.error(`stream ${episode} ULPDU ${index}: ${name}, ${u.length} octets, ${hex(u.subarray(0, 18))}`);
        // A zero-length ULPDU is one beat with tkeep 0 (as mpa_rx sends it).
        if (framer && deframer) {
          const f = framer.frame(u);
          fpdus++;
          let wire = f.wire;
          if (mpaError !== null && i === 0) wire = mpaError === LlpError.CRC.code && f.crcOffset >= 0 && mpaCfg!.crc ? corruptCrc(f) : f.markers.length ? corruptMarker(f, mpaCfg!.crc, r.int(0, f.markers.length - 1)) : wire;
          for (const e of deframer.push(wire)) modelSees.push(e.kind === 'fpdu' ? { ulpdu: e.ulpdu } : { error: e.code });
          // TCP segments of any size: MPA ignores their boundaries.
          for (let at = 0; at < wire.length; ) {
            const n = Math.min(wire.length - at, r.int(1, 4 * W));
            bench.source.send(wire.subarray(at, at + n));
            at += n;
          }
        } else {
          modelSees.push(mpaError === null ? { ulpdu: u } : { error: mpaError });
          if (u.length === 0) bench.source.sendBeats([{ data: new Uint8Array(W), tkeep: 0, tlast: true, tuser }]);
          else bench.source.send(u, tuser);
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

    const newFx = (): StepSideEffects => ({ recv: [], orq: [], inject: false, abort: false, blockTx: false, burst: true, mpaError: null, wrs: [], localSent: [] });
    let pendingMpaError: number | null = null;
    const applyFx = (fx: StepSideEffects) => {
      bench.recv.queue.push(...fx.recv);
      // Receive buffers start with the model's random contents too.
      for (const b of fx.recv) bench.mem.memory.write(b.addr, peer.localRnic.memory.read(b.addr, b.len));
      bench.orq.queue.push(...fx.orq);
    };

    let steps = 0;
    const budget = r.int(1, 60);
    while (steps < budget && sent < opts.messages && mismatchCount + violationCount === badBefore) {
      steps++;
      sent++;
      opts.onProgress?.(sent, opts.messages);
      const fx = newFx();
      let us: Uint8Array[] | null = null;
      if (!failed && r.bool(opts.faults)) {
        fx.burst = false;
        const kind: FaultKind = FAULT_KINDS[nextFault++ % FAULT_KINDS.length]!;
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
          const fx2 = newFx();
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
  const seconds = (performance.now() - t0) / 1000;
  const cycles = model.cycles - c0;
  model.close();
  return {
    dut,
    width: W,
    seed: opts.seed,
    fpdus,
    messages: sent,
    episodes,
    ulpdus,
    payloadBytes,
    events: eventsCompared,
    responses: responsesCompared,
    mismatches: mismatchCount,
    violations: violationCount,
    firstMismatch: mismatches[0] ?? null,
    firstViolation: violations[0] ?? null,
    errorsHit,
    errorsMissed: RX_ERROR_CODES.filter((e) => !errorsHit[e.name]).map((e) => `${formatErrorCode(e)} ${e.name}`),
    opcodes,
    coverage,
    cycles,
    simCyclesPerSecond: Math.round(cycles / Math.max(seconds, 1e-9)),
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
  bench.source.setPause(never());
  bench.configure({ pd: 7, ird: 4, msn: 1, mulpdu: 9000, bigEndian: false });
  const payload = ulpduBytes - TAGGED_HEADER_SIZE;
  const stride = Math.ceil(payload / W) * W;
  const region: RtlRegion = { stag: 0x0142, pd: 7, base: 0x10000000n, length: BigInt(stride * count), access: ['remote-write'], va: false, invalidatable: false };
  bench.stagCfg.queue.push(region);
  bench.settle('programming the STag table');
  for (let i = 0; i < count; i++) {
    bench.source.send(encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: rdmapControl(Opcode.WRITE), stag: region.stag, to: BigInt(i * stride) }, r.bytes(payload)), 1);
  }
  const sAxis = { valid: model.handle('s_axis_tvalid'), ready: model.handle('s_axis_tready') };
  let firstBeat = -1;
  bench.tb.until(() => {
    if (firstBeat < 0 && model.peekNumber(sAxis.valid) === 1 && model.peekNumber(sAxis.ready) === 1) firstBeat = model.cycles;
    return bench.source.idle && bench.mem.writes.length > 0 && model.peekNumber(model.handle('rx_idle')) === 1;
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
