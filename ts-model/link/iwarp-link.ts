import { fpduCycles } from '../cost/cost-model';
import {
  MpaDeframer,
  MpaFramer,
  mulpdu,
  setUpConnection,
  type ConnectionResult,
  type ConnectionSetup,
  type FramedFpdu,
  type MpaOptions,
} from '../mpa';
import { DEFAULT_MPA_OPTIONS } from '../mpa/options';
import { RdmapEndpoint, type OutboundUlpdu } from '../rnic/endpoint';
import type { RnicEvent, Side } from '../rnic/events';
import type { Rnic } from '../rnic/rnic';
import type { RtrKind } from '../rnic/work-request';
import { LlpError } from '../terminate-codes';

/** One TCP segment as it went on the wire (what the pcap shows). */
export interface TcpSegmentRecord {
  readonly from: Side;
  readonly seq: number;
  readonly payload: Uint8Array;
  readonly kind: 'mpa-request' | 'mpa-reply' | 'fpdu';
  readonly opcode: number | null;
  readonly op: number | null;
  readonly fault: string | null;
  /** The octets were cut short here: the connection was lost mid-FPDU. */
  readonly lost?: boolean;
}

/**
 * Hooks that corrupt traffic on its way: `ulpdu` before MPA framing (header faults, so the CRC is
 * good and DDP/RDMAP must catch them), `wire` after framing (CRC and marker faults), `beforeDeliver`
 * on the receiving endpoint (local failures). Each returns null to leave the traffic alone.
 */
export interface LinkFaults {
  ulpdu?(from: Side, item: OutboundUlpdu): { readonly ulpdu: Uint8Array; readonly label: string } | null;
  wire?(from: Side, item: OutboundUlpdu, framed: FramedFpdu): { readonly wire: Uint8Array; readonly label: string; readonly lost?: boolean } | null;
  beforeDeliver?(to: RdmapEndpoint, item: OutboundUlpdu): void;
}

export interface LinkConfig {
  readonly mpa: ConnectionSetup;
  readonly emss: number;
  /** Datapath width for the cost model, octets per cycle. */
  readonly width: number;
  readonly rnics: Readonly<Record<Side, Rnic>>;
  readonly pd?: Readonly<Partial<Record<Side, number>>>;
  readonly faults?: LinkFaults;
  /** First MSN of every queue (default 1); lets tests reach the 2^32 wrap. */
  readonly initialMsn?: number;
  /** Tamper with the MPA frames (connection-level faults). */
  readonly tamperSetup?: (r: ConnectionResult) => ConnectionResult;
  /**
   * Sees every event as it happens (the `events` list orders an FPDU's `fpdu-sent` before what its
   * delivery caused, so it is not always emission order): a placement is reported right after the
   * octets land, so an observer can read them before a later message overwrites them.
   */
  readonly onEvent?: (e: RnicEvent) => void;
}

const MAX_ROUNDS = 1_000_000;
const other = (s: Side): Side => (s === 'initiator' ? 'responder' : 'initiator');

/**
 * Two RDMAP endpoints on two RNICs joined by one TCP connection (spec/mpa.md §7.4): the MPA
 * Request and Reply go first, then each side's ULPDUs are framed by MPA at their place in
 * sequence space and sent one FPDU per TCP segment (an MPA-aware sender, spec/mpa.md §5). The
 * link runs both sides until neither has anything left to send.
 */
export class IwarpLink {
  readonly connection: ConnectionResult;
  readonly events: RnicEvent[] = [];
  readonly segments: TcpSegmentRecord[] = [];
  private readonly endpoints: Partial<Record<Side, RdmapEndpoint>> = {};
  private readonly framers: Partial<Record<Side, MpaFramer>> = {};
  /** Indexed by the receiving side. */
  private readonly deframers: Partial<Record<Side, MpaDeframer>> = {};
  private readonly options: MpaOptions;
  private readonly cfg: LinkConfig;

  constructor(cfg: LinkConfig) {
    this.cfg = cfg;
    this.options = cfg.mpa.options ?? DEFAULT_MPA_OPTIONS;
    let conn = setUpConnection(cfg.mpa);
    if (cfg.tamperSetup) conn = cfg.tamperSetup(conn);
    this.connection = conn;
    this.segments.push({ from: 'initiator', seq: conn.request.seq, payload: conn.request.octets, kind: 'mpa-request', opcode: null, op: null, fault: null });
    if (conn.reply) {
      this.segments.push({ from: 'responder', seq: conn.reply.seq, payload: conn.reply.octets, kind: 'mpa-reply', opcode: null, op: null, fault: null });
    }
    const emit = (e: RnicEvent) => {
      this.events.push(e);
      cfg.onEvent?.(e);
    };
    if (conn.status === 'rejected' || (conn.status === 'failed' && !conn.error?.terminate)) {
      // No FPDU channel: the side that noticed closes TCP and reports locally (spec/mpa.md §7.5).
      const side = conn.failedAt ?? 'initiator';
      if (conn.status === 'rejected') emit({ type: 'closed', side, reason: 'the responder rejected the connection (R = 1)' });
      else emit({ type: 'closed', side, reason: conn.error!.reason, error: LlpError.INVALID_REQ_REP });
      return;
    }
    const streams = { initiator: conn.initiatorToResponder, responder: conn.responderToInitiator };
    for (const side of ['initiator', 'responder'] as const) {
      const tx = streams[side];
      const rx = streams[other(side)];
      this.framers[side] = new MpaFramer(tx);
      this.deframers[side] = new MpaDeframer(rx);
      const state = conn[side];
      this.endpoints[side] = new RdmapEndpoint({
        side,
        rnic: cfg.rnics[side],
        pd: cfg.pd?.[side] ?? 0,
        mulpdu: mulpdu(cfg.emss, tx.markers, this.options),
        ird: state.ird,
        ord: state.ord,
        emit,
        ...(cfg.initialMsn !== undefined && { initialMsn: cfg.initialMsn }),
      });
    }
    if (conn.status === 'failed') {
      // 0x05–0x07: the initiator's first and last FPDU is a Terminate (spec/mpa.md §8.4).
      this.endpoint('initiator').llpError(conn.error!.code, conn.error!.reason);
    } else if (conn.rtr) {
      this.endpoint('initiator').postRtr(conn.rtr as RtrKind);
    }
  }

  /** The endpoint of a side; throws if the connection never reached full operation. */
  endpoint(side: Side): RdmapEndpoint {
    const ep = this.endpoints[side];
    if (!ep) throw new Error(`the MPA connection is ${this.connection.status}: no ${side} endpoint`);
    return ep;
  }

  get established(): boolean {
    return this.endpoints.initiator !== undefined && this.connection.status === 'established';
  }

  /** Runs both sides until neither has anything to send (or both stopped). */
  run(): void {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let progress = false;
      for (const side of ['initiator', 'responder'] as const) progress = this.transmit(side) || progress;
      if (!progress) return;
    }
    throw new Error(`the link made no progress to quiescence in ${MAX_ROUNDS} rounds`);
  }

  /** Sends everything one side has, and delivers it to the other; false when it had nothing. */
  private transmit(side: Side): boolean {
    const ep = this.endpoints[side];
    if (!ep || !ep.hasOutput) return false;
    // MPA fencing: the responder sends no FPDU before the initiator's first one arrived [RFC 6581 §3].
    if (side === 'responder' && ep.received === 0) return false;
    const peer = this.endpoint(other(side));
    const framer = this.framers[side]!;
    const deframer = this.deframers[other(side)]!;
    for (const item of ep.pull()) {
      const hurt = this.cfg.faults?.ulpdu?.(side, item) ?? null;
      const mark = this.events.length;
      const framed = framer.frame(hurt ? hurt.ulpdu : item.ulpdu);
      const onWire = this.cfg.faults?.wire?.(side, item, framed) ?? null;
      const wire = onWire ? onWire.wire : framed.wire;
      const fault = onWire?.label ?? hurt?.label ?? null;
      this.segments.push({ from: side, seq: framed.startSeq, payload: wire, kind: 'fpdu', opcode: item.opcode, op: item.op, fault, ...(onWire?.lost && { lost: true }) });
      this.cfg.faults?.beforeDeliver?.(peer, item);
      const placements: { address: bigint; length: number }[] = [];
      const deliveries = deframer.push(wire);
      if (onWire?.lost) deliveries.push(...deframer.end());
      for (const ev of deliveries) {
        if (ev.kind === 'fpdu') peer.receive(ev.ulpdu, item.op);
        else if (ev.kind === 'error') peer.llpError(ev.code, ev.reason);
        else {
          // silentDropOnCrcError: the receiver discarded the segment, TCP retransmits it intact.
          this.segments.push({ from: side, seq: framed.startSeq, payload: framed.wire, kind: 'fpdu', opcode: item.opcode, op: item.op, fault: 'retransmission' });
          for (const again of deframer.push(framed.wire)) {
            if (again.kind === 'fpdu') peer.receive(again.ulpdu, item.op);
            else if (again.kind === 'error') peer.llpError(again.code, again.reason);
          }
        }
      }
      for (let k = mark; k < this.events.length; k++) {
        const e = this.events[k]!;
        if (e.type === 'placement' && e.side === peer.side) placements.push(e);
      }
      this.events.splice(mark, 0, {
        type: 'fpdu-sent',
        side,
        seq: framed.startSeq,
        ulpduLength: framed.ulpduLength,
        wireLength: wire.length,
        opcode: item.opcode,
        op: item.op,
        markers: framed.markers.length,
        fault,
        cycles: fpduCycles(this.cfg.width, { wireLength: framed.wire.length, ulpduLength: framed.ulpduLength, placements }),
      });
      // DDP is done with the message once MPA took its last segment; reported after the FPDU.
      item.onSent?.();
      if (onWire?.lost) {
        // The TCP connection is gone: nothing more flows in either direction.
        ep.llpError(LlpError.TCP_CLOSED.code, 'the TCP connection was lost');
        return true;
      }
    }
    return true;
  }
}
