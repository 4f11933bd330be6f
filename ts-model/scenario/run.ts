import { corruptCrc, corruptMarker } from '../mpa/faults';
import { IwarpLink, type LinkFaults, type TcpSegmentRecord } from '../link/iwarp-link';
import { makeStag, stagIndex } from '../memory/stag';
import { firstTaggedOffset, type Region } from '../memory/stag-table';
import { AOpCode } from '../rdmap/atomics';
import { Opcode, OPCODE_NAMES } from '../rdmap/constants';
import type { OutboundUlpdu } from '../rnic/endpoint';
import type { RnicEvent, Side } from '../rnic/events';
import { Rnic } from '../rnic/rnic';
import type { WorkRequest } from '../rnic/work-request';
import { RdmapError } from '../terminate-codes';
import { totalCycles } from '../cost/cost-model';
import { tamperSetup } from './connection-faults';
import { opPayload } from './payload';
import type { ConnectionFaultKind, OpFaultKind, Scenario, ScenarioOp } from './schema';
import { hex32 } from '../util/hex';

export const DEFAULT_ISN: Readonly<Record<Side, number>> = Object.freeze({ initiator: 0x01000000, responder: 0x02000000 });

export interface RegionDigest {
  readonly at: Side;
  readonly stag: string;
  readonly base: string;
  readonly length: string;
  readonly valid: boolean;
  /** FNV-1a 64 of the region's octets (HostMemory.digest). */
  readonly digest: string;
}

export interface ScenarioSummary {
  readonly connection: string;
  readonly ops: number;
  readonly fpdus: number;
  readonly wireOctets: number;
  readonly placements: number;
  readonly placedOctets: number;
  readonly completions: number;
  readonly flushed: number;
  readonly terminates: readonly string[];
  readonly closed: readonly string[];
  /** Cost-model cycles summed over every FPDU and stage, at the scenario's width. */
  readonly cycles: number;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly link: IwarpLink;
  readonly events: readonly RnicEvent[];
  readonly segments: readonly TcpSegmentRecord[];
  readonly memory: readonly RegionDigest[];
  readonly summary: ScenarioSummary;
  /** The two RNICs (STag tables and host memory as the run left them). */
  readonly rnics: Readonly<Record<Side, Rnic>>;
  /** Every work request posted, with its op index and side (a co-simulation posts the same). */
  readonly posted: readonly { readonly index: number; readonly from: Side; readonly wr: WorkRequest }[];
  /** Every receive buffer posted, in order, with the address the model gave it. */
  readonly buffers: readonly { readonly at: Side; readonly addr: bigint; readonly length: number }[];
}

const other = (s: Side): Side => (s === 'initiator' ? 'responder' : 'initiator');

export interface RunOptions {
  /** Sees every event as it happens, with the two RNICs (e.g. to read what a placement wrote). */
  readonly onEvent?: (e: RnicEvent, rnics: Readonly<Record<Side, Rnic>>) => void;
}

/**
 * Runs a parsed scenario on two model RNICs joined by one connection and reports every event.
 * Deterministic: the same scenario gives the same events, octets and digests.
 */
export function runScenario(s: Scenario, run: RunOptions = {}): ScenarioResult {
  const rnics: Record<Side, Rnic> = { initiator: new Rnic('initiator', s.options.rdmap), responder: new Rnic('responder', s.options.rdmap) };
  const pd = { initiator: s.connection.initiator.pd, responder: s.connection.responder.pd };
  for (const r of s.regions) {
    const rnic = rnics[r.at];
    rnic.stags.register({
      stag: r.stag,
      pd: r.pd ?? pd[r.at],
      base: r.base ?? rnic.allocate(r.length),
      length: r.length,
      access: r.access,
      addressing: r.addressing,
      invalidatable: r.invalidatable,
    });
  }

  const faultsOf = (i: number): Set<OpFaultKind> => new Set(s.faults.flatMap((f) => ('op' in f && f.op === i ? [f.kind] : [])));
  const connectionFaults = s.faults.flatMap((f) => ('op' in f ? [] : [f.kind])) as ConnectionFaultKind[];
  const c = s.connection;
  const rtr = c.rtr === null ? [] : [c.rtr];
  const link = new IwarpLink({
    mpa: {
      initiatorIsn: c.initiator.isn ?? DEFAULT_ISN.initiator,
      responderIsn: c.responder.isn ?? DEFAULT_ISN.responder,
      initiator: { revision: c.initiator.revision ?? c.revision, markers: c.initiator.markers, crc: c.initiator.crc, ird: c.initiator.ird, ord: c.initiator.ord, rtr },
      responder: {
        revision: c.responder.revision ?? c.revision,
        markers: c.responder.markers,
        crc: c.responder.crc,
        ird: c.responder.ird,
        ord: c.responder.ord,
        rtr: c.responder.acceptRtr ?? ['write', 'send', 'read'],
      },
      options: s.options.mpa,
    },
    emss: c.emss,
    width: s.width,
    initialMsn: c.initialMsn,
    rnics,
    pd,
    faults: linkFaults(s, faultsOf),
    ...(run.onEvent && { onEvent: (e: RnicEvent) => run.onEvent!(e, rnics) }),
    ...(connectionFaults.length && { tamperSetup: (r) => tamperSetup(r, connectionFaults) }),
  });

  const posted: { index: number; from: Side; wr: WorkRequest }[] = [];
  const buffers: { at: Side; addr: bigint; length: number }[] = [];
  if (link.established) {
    for (const r of s.receives) for (let k = 0; k < r.count; k++) buffers.push({ at: r.at, addr: link.endpoint(r.at).postReceive(r.length), length: r.length });
    s.ops.forEach((op, i) => {
      const faults = faultsOf(i);
      if (faults.has('no-receive-buffer')) {
        const target = link.endpoint(other(op.from));
        while (target.withdrawReceive());
      }
      if (op.op === 'abort') link.endpoint(op.from).abort(`the ULP at the ${op.from} aborted (op ${i})`);
      else {
        const wr = workRequest(s, rnics, op, i, faults);
        posted.push({ index: i, from: op.from, wr });
        link.endpoint(op.from).post(wr);
      }
      if (!s.pipeline) link.run();
    });
    link.run();
  } else if (link.connection.status === 'failed' && link.connection.error?.terminate) {
    link.run();
  }

  const memory: RegionDigest[] = (['initiator', 'responder'] as const).flatMap((at) =>
    rnics[at].stags.regions().map((r: Region) => ({
      at,
      stag: hex32(r.stag),
      base: `0x${r.base.toString(16)}`,
      length: r.length.toString(),
      valid: r.valid,
      digest: rnics[at].memory.digest(r.base, Number(r.length)),
    })),
  );
  return { scenario: s, link, events: link.events, segments: link.segments, memory, summary: summarize(s, link), rnics, posted, buffers };
}

function summarize(s: Scenario, link: IwarpLink): ScenarioSummary {
  const ev = link.events;
  const fpdus = ev.filter((e) => e.type === 'fpdu-sent');
  const placements = ev.filter((e) => e.type === 'placement');
  const completions = ev.filter((e) => e.type === 'completion');
  return {
    connection: link.connection.status,
    ops: s.ops.length,
    fpdus: fpdus.length,
    wireOctets: fpdus.reduce((a, e) => a + e.wireLength, 0),
    placements: placements.length,
    placedOctets: placements.reduce((a, e) => a + e.length, 0),
    completions: completions.length,
    flushed: completions.filter((e) => e.status === 'flushed').length,
    terminates: ev.flatMap((e) => (e.type === 'terminate-sent' ? [`${e.side}: ${e.name} (0x${e.layer.toString(16)}/0x${e.etype.toString(16)}/0x${e.code.toString(16).padStart(2, '0')})`] : [])),
    closed: ev.flatMap((e) => (e.type === 'closed' ? [`${e.side}: ${e.reason}`] : [])),
    cycles: fpdus.reduce((a, e) => a + totalCycles(e.cycles), 0),
  };
}


/** The TO of `offset` in the region `stag` names at `side` (VA regions start at their base). */
function toOf(rnics: Record<Side, Rnic>, side: Side, stag: number, offset: bigint): bigint {
  const region = rnics[side].stags.lookup(stag);
  return BigInt.asUintN(64, (region ? firstTaggedOffset(region) : 0n) + offset);
}

/** An STag whose index is registered nowhere at `side`. */
function unregisteredStag(rnics: Record<Side, Rnic>, side: Side): number {
  const used = rnics[side].stags.regions().map((r) => stagIndex(r.stag));
  return makeStag(used.length ? Math.max(...used) + 1 : 0x7ffff0, 0x5a);
}

/** Turns one scenario op into the work request its side posts, with WR-level faults applied. */
function workRequest(s: Scenario, rnics: Record<Side, Rnic>, op: Exclude<ScenarioOp, { op: 'abort' }>, id: number, faults: Set<OpFaultKind>): WorkRequest {
  const peer = other(op.from);
  const badStag = faults.has('bad-stag') ? unregisteredStag(rnics, peer) : null;
  const remote = (stag: number, offset: bigint, length: number): { stag: number; to: bigint } => {
    const region = rnics[peer].stags.lookup(stag);
    let at = offset;
    // out-of-bounds: start right after the region's last octet.
    if (faults.has('out-of-bounds') && region) at = region.length;
    // misaligned-atomic: move the target 4 octets, staying inside the region if possible.
    if (faults.has('misaligned-atomic')) at = region && at + 4n + BigInt(length) > region.length && at >= 4n ? at - 4n : at + 4n;
    return { stag: badStag ?? stag, to: toOf(rnics, peer, stag, at) };
  };
  switch (op.op) {
    case 'write':
      return { kind: 'write', id, ...remote(op.stag, op.offset, 0), data: opPayload(s.seed, id, op) };
    case 'read':
      return { kind: 'read', id, ...remote(op.stag, op.offset, 0), length: op.length, localStag: op.localStag, localTo: toOf(rnics, op.from, op.localStag, op.localOffset) };
    case 'send':
    case 'send-se':
      return { kind: 'send', id, solicited: op.op === 'send-se', invalidate: null, data: opPayload(s.seed, id, op) };
    case 'send-invalidate':
    case 'send-se-invalidate':
      return { kind: 'send', id, solicited: op.op === 'send-se-invalidate', invalidate: badStag ?? op.invalidate, data: opPayload(s.seed, id, op) };
    case 'immediate':
    case 'immediate-se':
      return { kind: 'immediate', id, solicited: op.op === 'immediate-se', data: opPayload(s.seed, id, op) };
    case 'fetch-add':
    case 'cmp-swap': {
      const fa = op.op === 'fetch-add';
      return {
        kind: 'atomic',
        id,
        aopcode: fa ? AOpCode.FETCH_ADD : AOpCode.CMP_SWAP,
        ...remote(op.stag, op.offset, 8),
        // FetchAdd sends Compare Data 0 and Compare Mask all ones (RFC 7306 §5.2.1).
        addSwapData: fa ? op.add : op.swap,
        addSwapMask: fa ? op.mask : op.swapMask,
        compareData: fa ? 0n : op.compare,
        compareMask: fa ? (1n << 64n) - 1n : op.compareMask,
        localStag: op.localStag ?? null,
        localTo: op.localStag === undefined ? 0n : toOf(rnics, op.from, op.localStag, op.localOffset),
      };
    }
  }
}

/** ULPDU-, wire- and delivery-level faults on the first FPDU(s) of the ops that carry them. */
function linkFaults(s: Scenario, faultsOf: (i: number) => Set<OpFaultKind>): LinkFaults {
  const done = new Set<string>();
  /** True the first time fault `kind` meets a ULPDU of its op (applies once per op). */
  const once = (item: OutboundUlpdu, from: Side, kind: OpFaultKind): boolean => {
    if (item.op === null || s.ops[item.op]?.from !== from || !faultsOf(item.op).has(kind)) return false;
    const key = `${item.op}:${kind}`;
    if (done.has(key)) return false;
    done.add(key);
    return true;
  };
  const patch = (item: OutboundUlpdu, label: string, f: (u: Uint8Array, v: DataView) => void) => {
    const u = item.ulpdu.slice();
    f(u, new DataView(u.buffer));
    return { ulpdu: u, label };
  };
  return {
    ulpdu(from, item) {
      if (once(item, from, 'bad-ddp-version')) return patch(item, 'bad-ddp-version', (u) => (u[0] = u[0]! & ~0x03));
      if (once(item, from, 'bad-rdmap-version')) return patch(item, 'bad-rdmap-version', (u) => (u[1] = u[1]! & 0x3f));
      if (once(item, from, 'bad-opcode')) return patch(item, 'bad-opcode', (u) => (u[1] = (u[1]! & 0xf0) | 0x0c));
      if (once(item, from, 'bad-qn')) return patch(item, 'bad-qn', (_, v) => v.setUint32(6, 0x1f));
      if (once(item, from, 'bad-msn')) return patch(item, 'bad-msn', (_, v) => v.setUint32(10, (v.getUint32(10) + 1) >>> 0));
      if (once(item, from, 'bad-mo')) return patch(item, 'bad-mo', (_, v) => v.setUint32(14, v.getUint32(14) + 4));
      if (once(item, from, 'unexpected-read-response')) return patch(item, 'unexpected-read-response', (u) => (u[1] = (u[1]! & 0xf0) | Opcode.READ_RESPONSE));
      if (once(item, from, 'short-ulpdu')) return { ulpdu: item.ulpdu.slice(0, 10), label: 'short-ulpdu' };
      return null;
    },
    wire(from, item, framed) {
      if (once(item, from, 'corrupt-crc')) return { wire: corruptCrc(framed), label: 'corrupt-crc' };
      // A marker fault needs an FPDU that carries a marker: the op's first one that does.
      if (framed.markers.length && once(item, from, 'bad-marker')) {
        return { wire: corruptMarker(framed, s.connection.initiator.crc || s.connection.responder.crc), label: 'bad-marker' };
      }
      if (once(item, from, 'connection-lost')) return { wire: framed.wire.slice(0, Math.max(1, framed.wire.length >> 1)), label: 'connection-lost', lost: true };
      return null;
    },
    beforeDeliver(to, item) {
      if (once(item, other(to.side), 'rnic-failure')) to.injectFailure(RdmapError.GLOBAL_CATASTROPHIC);
    },
  };
}

export const opcodeName = (op: number): string => OPCODE_NAMES[op] ?? `opcode 0x${op.toString(16)}`;
