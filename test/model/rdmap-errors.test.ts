import { describe, expect, test } from 'vitest';
import { MpaDeframer, type DeliveredFpdu } from '../../ts-model/mpa';
import { HostMemory } from '../../ts-model/memory/host-memory';
import { IMMEDIATE_DATA_SIZE, Opcode } from '../../ts-model/rdmap/constants';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { decodeTerminate, type TerminateFields } from '../../ts-model/rdmap/headers';
import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { decodeDdpHeader } from '../../ts-model/ddp/header';
import { IwarpLink } from '../../ts-model/link/iwarp-link';
import type { RnicEvent, Side } from '../../ts-model/rnic/events';
import { DEFAULT_RDMAP_OPTIONS, RdmapOptionsSchema, type RdmapOptions } from '../../ts-model/rnic/options';
import { Rnic } from '../../ts-model/rnic/rnic';
import type { WorkRequest } from '../../ts-model/rnic/work-request';
import { DEFAULT_ISN, runScenario, type ScenarioResult } from '../../ts-model/scenario/run';
import { parseScenario, type Scenario, type ScenarioInput } from '../../ts-model/scenario/schema';
import { ALL_ERROR_CODES, RdmapError, formatErrorCode } from '../../ts-model/terminate-codes';
import { hex } from '../../ts-model/util/hex';

/**
 * Every Terminate / LLP error code of spec/ddp-rdmap.md §9 (and spec/mpa.md §6) raised by a
 * scenario, with the checks of §5.6 and §8: the right triple on the right side, exactly one
 * Terminate per stream, nothing placed or completed after the error, no placement outside what
 * the STag table and the posted receive buffers allow, the peer sees the same code and flushes,
 * and the Terminate octets follow §2.4.
 */

type Triple = readonly [layer: number, etype: number, code: number];
const other = (s: Side): Side => (s === 'initiator' ? 'responder' : 'initiator');

// ---------------------------------------------------------------------------------------------
// Scenario building blocks

const ALL_REMOTE = ['remote-write', 'remote-read', 'remote-atomic', 'local-write', 'local-read'] as const;

/**
 * Responder regions: 0x100 full rights, 0x300 no remote-write/-atomic, 0x400 no remote-read, 0x500 other PD,
 * 0x600 not invalidatable. Initiator: 0x200 a Read/Atomic sink, 0x700 without local-write.
 */
const REGIONS: ScenarioInput['regions'] = [
  { at: 'responder', stag: '0x100', length: 4096, access: [...ALL_REMOTE] },
  { at: 'responder', stag: '0x300', length: 4096, access: ['remote-read', 'local-write'] },
  { at: 'responder', stag: '0x400', length: 4096, access: ['remote-write', 'remote-atomic'] },
  { at: 'responder', stag: '0x500', length: 4096, access: [...ALL_REMOTE], pd: 7 },
  { at: 'responder', stag: '0x600', length: 4096, access: [...ALL_REMOTE], invalidatable: false },
  { at: 'initiator', stag: '0x200', length: 4096, access: ['local-write', 'local-read'] },
  { at: 'initiator', stag: '0x700', length: 4096, access: ['local-read'] },
];
const RECEIVES: ScenarioInput['receives'] = [{ at: 'responder', length: 256, count: 4 }];

type OpInput = NonNullable<ScenarioInput['ops']>[number];
type FaultInput = NonNullable<ScenarioInput['faults']>[number];

/** A good Write first (so something is placed before the error), the op under test, then a Send that must be flushed. */
const PRE: OpInput = { from: 'initiator', op: 'write', stag: '0x100', offset: 64, length: 32 };
const POST: OpInput = { from: 'initiator', op: 'send', length: 8 };
const READ = (extra: Partial<Extract<OpInput, { op: 'read' }>> = {}): OpInput => ({
  from: 'initiator',
  op: 'read',
  stag: '0x100',
  length: 128,
  localStag: '0x200',
  ...extra,
});

function scenario(mid: OpInput, faults: readonly string[] = [], extra: Partial<ScenarioInput> = {}): ScenarioInput {
  return {
    regions: REGIONS,
    receives: RECEIVES,
    ops: [PRE, mid, POST],
    faults: faults.map((kind) => ({ op: 1, kind }) as FaultInput),
    ...extra,
  };
}

function connectionFault(kind: string, extra: Partial<ScenarioInput> = {}): ScenarioInput {
  return { regions: REGIONS, receives: RECEIVES, ops: [PRE], faults: [{ kind } as FaultInput], ...extra };
}

interface Case {
  readonly name: string;
  readonly error: Triple;
  /** The side that detects the error (sends the Terminate or reports the close). */
  readonly side: Side;
  readonly scenario: ScenarioInput;
  /** A local report only (`closed` with the error), no Terminate on the wire. */
  readonly closedOnly?: boolean;
  /** No FPDU at all (MPA start-up failed without a channel). */
  readonly noFpdu?: boolean;
}

const CASES: readonly Case[] = [
  // DDP, Layer 0x1 -------------------------------------------------------------------------------
  {
    name: 'DDP local catastrophic: Write turned Read Response (local-write region), no Read outstanding',
    error: [1, 0, 0x00],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['unexpected-read-response']),
  },
  {
    name: 'DDP invalid STag: Write to an unregistered STag',
    error: [1, 1, 0x00],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['bad-stag']),
  },
  {
    name: 'DDP invalid STag (T3): Write to a region without remote-write',
    error: [1, 1, 0x00],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x300', length: 64 }),
  },
  {
    name: 'DDP base or bounds: Write past the end of the region',
    error: [1, 1, 0x01],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['out-of-bounds']),
  },
  {
    name: 'DDP base or bounds: Write straddling the end of the region',
    error: [1, 1, 0x01],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', offset: 4090, length: 7 }),
  },
  {
    name: 'DDP base or bounds: the second segment of a multi-segment Write runs past the region (first one placed)',
    error: [1, 1, 0x01],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', offset: 2048, length: 4000 }),
  },
  {
    name: 'DDP invalid STag (T3) at the requester: Read Response into a sink without local-write',
    error: [1, 1, 0x00],
    side: 'initiator',
    scenario: scenario(READ({ localStag: '0x700' })),
  },
  {
    name: 'DDP base or bounds at the requester: Read Response past the end of the sink',
    error: [1, 1, 0x01],
    side: 'initiator',
    scenario: scenario(READ({ localOffset: 4000 })),
  },
  {
    name: 'DDP STag not associated: Write to a region of another PD',
    error: [1, 1, 0x02],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x500', length: 64 }),
  },
  {
    name: 'DDP TO wrap: Write of 64 octets at TO 0xfffffffffffffff0 (zero-based region)',
    error: [1, 1, 0x03],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', offset: '0xfffffffffffffff0', length: 64 }),
  },
  {
    name: 'DDP tagged invalid version: Write with DV 0',
    error: [1, 1, 0x04],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['bad-ddp-version']),
  },
  {
    name: 'DDP invalid QN: Send on QN 0x1f',
    error: [1, 2, 0x01],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['bad-qn']),
  },
  {
    name: 'DDP invalid QN: Read Request on QN 0x1f',
    error: [1, 2, 0x01],
    side: 'responder',
    scenario: scenario(READ(), ['bad-qn']),
  },
  {
    name: 'DDP no buffer: Send with no receive buffer posted',
    error: [1, 2, 0x02],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['no-receive-buffer']),
  },
  {
    name: 'DDP MSN range: Send with MSN + 1',
    error: [1, 2, 0x03],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['bad-msn']),
  },
  {
    name: 'DDP invalid MO: Send starting at MO 4',
    error: [1, 2, 0x04],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['bad-mo']),
  },
  {
    name: 'DDP too long: Send of 300 octets into a 256-octet buffer',
    error: [1, 2, 0x05],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 300 }),
  },
  {
    name: 'DDP too long: a multi-segment Send overruns its 256-octet buffer in a later segment (EMSS 128)',
    error: [1, 2, 0x05],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 400 }, [], { connection: { emss: 128 } }),
  },
  {
    name: 'DDP untagged invalid version: Send with DV 0',
    error: [1, 2, 0x06],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['bad-ddp-version']),
  },

  // RDMAP, Layer 0x0 -----------------------------------------------------------------------------
  {
    name: 'RDMAP local catastrophic: the initiator ULP aborts',
    error: [0, 0, 0x00],
    side: 'initiator',
    scenario: scenario({ from: 'initiator', op: 'abort' }),
  },
  {
    name: 'RDMAP local catastrophic: the responder ULP aborts',
    error: [0, 0, 0x00],
    side: 'responder',
    scenario: { regions: REGIONS, receives: RECEIVES, ops: [PRE, { from: 'responder', op: 'abort' }, POST] },
  },
  {
    name: 'RDMAP invalid STag: Read of an unregistered Source STag',
    error: [0, 1, 0x00],
    side: 'responder',
    scenario: scenario(READ(), ['bad-stag']),
  },
  {
    name: 'RDMAP invalid STag: FetchAdd on an unregistered STag',
    error: [0, 1, 0x00],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'fetch-add', stag: '0x100', add: 1 }, ['bad-stag']),
  },
  {
    name: 'RDMAP base or bounds: Read past the end of the region',
    error: [0, 1, 0x01],
    side: 'responder',
    scenario: scenario(READ(), ['out-of-bounds']),
  },
  {
    name: 'RDMAP access rights: Read from a region without remote-read',
    error: [0, 1, 0x02],
    side: 'responder',
    scenario: scenario(READ({ stag: '0x400' })),
  },
  {
    name: 'RDMAP access rights: FetchAdd on a region without remote-atomic',
    error: [0, 1, 0x02],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'fetch-add', stag: '0x300', add: 1, localStag: '0x200' }),
  },
  {
    name: 'RDMAP STag not associated: Read from a region of another PD',
    error: [0, 1, 0x03],
    side: 'responder',
    scenario: scenario(READ({ stag: '0x500' })),
  },
  {
    name: 'RDMAP TO wrap: Read of 64 octets at TO 0xfffffffffffffff0',
    error: [0, 1, 0x04],
    side: 'responder',
    scenario: scenario(READ({ offset: '0xfffffffffffffff0', length: 64 })),
  },
  {
    name: 'RDMAP protection, cannot invalidate: Send with Invalidate of an STag of another PD',
    error: [0, 1, 0x09],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send-invalidate', invalidate: '0x500', length: 16 }),
  },
  {
    name: 'RDMAP protection, cannot invalidate: Send with SE and Invalidate of an unregistered STag',
    error: [0, 1, 0x09],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send-se-invalidate', invalidate: '0x100', length: 16 }, ['bad-stag']),
  },
  {
    name: 'RDMAP invalid version: Write with RV 0',
    error: [0, 2, 0x05],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['bad-rdmap-version']),
  },
  {
    name: 'RDMAP invalid version: Read Request with RV 0',
    error: [0, 2, 0x05],
    side: 'responder',
    scenario: scenario(READ(), ['bad-rdmap-version']),
  },
  {
    name: 'RDMAP unexpected opcode: Send with opcode 0xC',
    error: [0, 2, 0x06],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['bad-opcode']),
  },
  {
    name: 'RDMAP stream catastrophic: misaligned FetchAdd',
    error: [0, 2, 0x07],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'fetch-add', stag: '0x100', add: 1, localStag: '0x200' }, ['misaligned-atomic']),
  },
  {
    name: 'RDMAP stream catastrophic: a third Read Request beyond responder IRD 2',
    error: [0, 2, 0x07],
    side: 'responder',
    scenario: {
      regions: REGIONS,
      receives: RECEIVES,
      pipeline: true,
      connection: { initiator: { ord: 0x3fff }, responder: { ird: 2 } },
      ops: [PRE, READ(), READ({ offset: 128, localOffset: 128 }), READ({ offset: 256, localOffset: 256 }), READ({ offset: 384, localOffset: 384 })],
    },
  },
  {
    name: 'RDMAP global catastrophic: RNIC failure on a Write',
    error: [0, 2, 0x08],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['rnic-failure']),
  },
  {
    name: 'RDMAP operation, cannot invalidate: Send with Invalidate of a non-invalidatable region',
    error: [0, 2, 0x09],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send-invalidate', invalidate: '0x600', length: 16 }),
  },

  // LLP, Layer 0x2 -------------------------------------------------------------------------------
  {
    name: 'LLP connection lost mid-FPDU: local close, no Terminate',
    error: [2, 0, 0x01],
    side: 'responder',
    closedOnly: true,
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 200 }, ['connection-lost']),
  },
  {
    name: 'LLP CRC error on a Write',
    error: [2, 0, 0x02],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['corrupt-crc']),
  },
  {
    name: 'LLP marker mismatch on a 1024-octet Write (markers on)',
    error: [2, 0, 0x03],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 1024 }, ['bad-marker'], { connection: { responder: { markers: true } } }),
  },
  {
    name: 'LLP ULPDU shorter than the DDP header',
    error: [2, 0, 0x03],
    side: 'responder',
    scenario: scenario({ from: 'initiator', op: 'send', length: 100 }, ['short-ulpdu']),
  },
  {
    name: 'LLP invalid MPA Request: corrupted key',
    error: [2, 0, 0x04],
    side: 'responder',
    closedOnly: true,
    noFpdu: true,
    scenario: connectionFault('bad-mpa-key'),
  },
  {
    name: 'LLP invalid MPA Request: Rev 2 initiator to a Rev 1 responder',
    error: [2, 0, 0x04],
    side: 'responder',
    closedOnly: true,
    noFpdu: true,
    scenario: { regions: REGIONS, receives: RECEIVES, ops: [PRE], connection: { initiator: { revision: 2 }, responder: { revision: 1 } } },
  },
  {
    name: 'LLP local catastrophic: initiator fails after the Reply',
    error: [2, 0, 0x05],
    side: 'initiator',
    scenario: connectionFault('setup-failure'),
  },
  {
    name: 'LLP insufficient IRD: Reply ORD above the initiator IRD',
    error: [2, 0, 0x06],
    side: 'initiator',
    scenario: connectionFault('reply-ord-exceeds-ird'),
  },
  {
    name: 'LLP no matching RTR: Send RTR offered, responder accepts only Write',
    error: [2, 0, 0x07],
    side: 'initiator',
    scenario: { regions: REGIONS, receives: RECEIVES, ops: [PRE], connection: { rtr: 'send', responder: { acceptRtr: ['write'] } } },
  },
];

/**
 * Codes of ALL_ERROR_CODES that no scenario can raise from the wire, with the reason. None: every
 * code the model defines is reachable.
 */
const NOT_TRIGGERABLE: ReadonlyMap<string, string> = new Map();

// ---------------------------------------------------------------------------------------------
// Observation helpers

const run = (input: ScenarioInput): ScenarioResult => runScenario(parseScenario(input));

/** Every FPDU one side sent, deframed from its wire octets (stops at the first MPA error). */
function deframe(r: ScenarioResult, from: Side): DeliveredFpdu[] {
  const c = r.link.connection;
  const deframer = new MpaDeframer(from === 'initiator' ? c.initiatorToResponder : c.responderToInitiator);
  const out: DeliveredFpdu[] = [];
  for (const s of r.segments) {
    if (s.kind !== 'fpdu' || s.from !== from || s.fault === 'retransmission') continue;
    for (const e of deframer.push(s.payload)) if (e.kind === 'fpdu') out.push(e);
  }
  return out;
}

const isTerminateUlpdu = (u: Uint8Array): boolean => (u[0]! & 0x80) === 0 && (u[1]! & 0x0f) === Opcode.TERMINATE;

interface WireTerminate {
  readonly ulpdu: Uint8Array;
  readonly fields: TerminateFields;
}

/** The Terminates a side put on the wire, decoded from its FPDUs. */
function wireTerminates(r: ScenarioResult, from: Side): WireTerminate[] {
  return deframe(r, from)
    .filter((f) => isTerminateUlpdu(f.ulpdu))
    .map((f) => {
      const fields = decodeTerminate(f.ulpdu.subarray(18));
      if (!fields) throw new Error('a Terminate on the wire does not decode');
      return { ulpdu: f.ulpdu, fields };
    });
}

/** The peer FPDU whose delivery raised the error: the last one sent to `side` before its terminate-sent. */
function offendingUlpdu(r: ScenarioResult, side: Side): Uint8Array | null {
  const at = r.events.findIndex((e) => e.type === 'terminate-sent' && e.side === side);
  const sent = r.events.slice(0, at).filter((e): e is Extract<RnicEvent, { type: 'fpdu-sent' }> => e.type === 'fpdu-sent' && e.side === other(side));
  const last = sent.at(-1);
  if (!last) return null;
  return deframe(r, other(side)).find((f) => f.startSeq === last.seq)?.ulpdu ?? null;
}

/** Receive buffers as runScenario posts them: after the regions, from the same per-RNIC allocator. */
function receiveBuffers(s: Scenario): Record<Side, { address: bigint; length: number }[]> {
  const rnics = { initiator: new Rnic('initiator'), responder: new Rnic('responder') };
  for (const r of s.regions) if (r.base === undefined) rnics[r.at].allocate(r.length);
  const out: Record<Side, { address: bigint; length: number }[]> = { initiator: [], responder: [] };
  for (const rc of s.receives) for (let k = 0; k < rc.count; k++) out[rc.at].push({ address: rnics[rc.at].allocate(rc.length), length: rc.length });
  return out;
}

/** The right a placement by `side` for scenario op `op` needs (spec/ddp-rdmap.md §5.3 T3, rdmap-extensions §7 A7). */
function neededRight(s: Scenario, side: Side, op: number | null): string | null {
  const o = op === null ? undefined : s.ops[op];
  if (!o) return null;
  const local = o.from === side;
  switch (o.op) {
    case 'write':
      return local ? null : 'remote-write';
    case 'read':
      return local ? 'local-write' : null;
    case 'fetch-add':
    case 'cmp-swap':
      return local ? 'local-write' : 'remote-atomic';
    default:
      return null;
  }
}

/** Every placement lies inside a registered region of the placing side that grants the right, or inside a posted receive buffer. */
function expectPlacementsAllowed(r: ScenarioResult): void {
  const buffers = receiveBuffers(r.scenario);
  for (const e of r.events) {
    if (e.type !== 'placement') continue;
    const end = e.address + BigInt(e.length);
    if (e.stag === null) {
      const inside = buffers[e.side].some((b) => e.address >= b.address && end <= b.address + BigInt(b.length));
      expect(inside, `untagged placement at 0x${e.address.toString(16)} +${e.length} (${e.side}) outside every receive buffer`).toBe(true);
      for (const m of r.memory.filter((m) => m.at === e.side)) {
        const base = BigInt(m.base);
        expect(end <= base || e.address >= base + BigInt(m.length), `untagged placement overlaps region ${m.stag}`).toBe(true);
      }
      continue;
    }
    const region = r.memory.find((m) => m.at === e.side && BigInt(m.stag) === BigInt(e.stag!));
    expect(region, `placement through STag 0x${e.stag.toString(16)} that is not registered at the ${e.side}`).toBeDefined();
    const base = BigInt(region!.base);
    expect(e.address >= base && end <= base + BigInt(region!.length), `placement outside region ${region!.stag}`).toBe(true);
    const right = neededRight(r.scenario, e.side, e.op);
    expect(right, `placement at the ${e.side} by op ${e.op} that should place nothing there`).not.toBeNull();
    const spec = r.scenario.regions.find((g) => g.at === e.side && g.stag === e.stag);
    expect(spec?.access).toContain(right);
  }
  // Regions nothing was placed in still hold what a fresh memory holds.
  const fresh = new HostMemory();
  for (const m of r.memory) {
    const base = BigInt(m.base);
    const touched = r.events.some((e) => e.type === 'placement' && e.side === m.at && e.address < base + BigInt(m.length) && e.address + BigInt(e.length) > base);
    if (!touched) expect(m.digest, `region ${m.at} ${m.stag} was written without a placement`).toBe(fresh.digest(base, Number(m.length)));
  }
}

type Completion = Extract<RnicEvent, { type: 'completion' }>;
const SEND_QUEUE_KINDS = new Set(['write', 'read', 'send', 'immediate', 'atomic', 'rtr']);

/** Each op the side posted completes exactly once (success or flushed). */
function expectEveryOpCompletes(r: ScenarioResult, side: Side): void {
  const mine = r.events.filter((e): e is Completion => e.type === 'completion' && e.side === side && SEND_QUEUE_KINDS.has(e.kind) && e.kind !== 'rtr');
  const posted = r.link.established ? r.scenario.ops.flatMap((o, i) => (o.from === side && o.op !== 'abort' ? [i] : [])) : [];
  expect(mine.map((e) => e.op).sort()).toEqual(posted.sort());
}

// ---------------------------------------------------------------------------------------------
// The table

describe('every error code, raised by a scenario (spec/ddp-rdmap.md §9, spec/mpa.md §6)', () => {
  test.each(CASES)('$name', (c) => {
    const r = run(c.scenario);
    const [layer, etype, code] = c.error;
    const peer = other(c.side);
    const ev = r.events;
    const terminatesSent = ev.filter((e) => e.type === 'terminate-sent');

    let errorAt: number;
    if (c.closedOnly) {
      // A local report only: no Terminate anywhere, a closed event carrying the code.
      expect(terminatesSent, r.summary.terminates.join('; ')).toEqual([]);
      errorAt = ev.findIndex((e) => e.type === 'closed' && e.error !== undefined);
      const closed = ev[errorAt];
      expect(closed, `no closed event with an error: ${r.summary.closed.join('; ')}`).toMatchObject({ type: 'closed', side: c.side, error: { layer, etype, code } });
      for (const s of ['initiator', 'responder'] as const) expect(wireTerminates(r, s)).toEqual([]);
      if (c.noFpdu) {
        expect(r.segments.filter((s) => s.kind === 'fpdu')).toEqual([]);
        expect(ev.filter((e) => e.type !== 'closed')).toEqual([]);
      } else {
        // The connection is gone both ways: the sender reports it too.
        expect(ev.some((e) => e.type === 'closed' && e.side === peer && e.error?.code === code)).toBe(true);
      }
    } else {
      // The first Terminate is the expected one, on the detecting side, and it is the only one.
      errorAt = ev.findIndex((e) => e.type === 'terminate-sent');
      expect(ev[errorAt], r.summary.terminates.join('; ') || 'no Terminate sent').toMatchObject({ type: 'terminate-sent', side: c.side, layer, etype, code });
      expect(terminatesSent).toHaveLength(1);
      expect(ev.some((e) => e.type === 'closed' && e.error !== undefined)).toBe(false);
      // Exactly one Terminate on the detecting side's stream, none on the other, with the same code.
      const mine = wireTerminates(r, c.side);
      expect(mine).toHaveLength(1);
      expect(wireTerminates(r, peer)).toEqual([]);
      expect(r.segments.filter((s) => s.kind === 'fpdu' && s.opcode === Opcode.TERMINATE).map((s) => s.from)).toEqual([c.side]);
      const t = mine[0]!.fields;
      expect([t.layer, t.etype, t.code]).toEqual([layer, etype, code]);
      // A start-up failure after the Reply: the TERM is the initiator's first and last FPDU, no RTR (spec/mpa.md §8.4).
      if (!r.link.established) expect(r.segments.filter((s) => s.kind === 'fpdu').map((s) => [s.from, s.opcode])).toEqual([[c.side, Opcode.TERMINATE]]);
      // The Terminate's own DDP header (§2.4): untagged, L = 1, DV 1, RV 1, QN 2, MSN 1, MO 0, RsvdULP 0.
      expect(decodeDdpHeader(mine[0]!.ulpdu)).toEqual({ tagged: false, last: true, dv: 1, rsvdUlp: 0x47, rsvdUlp2: 0, qn: 2, msn: 1, mo: 0 });
      // What is copied (§2.4 table): nothing for LLP and RDMAP local catastrophic; else length + DDP header; R for a Read Request.
      const offending = offendingUlpdu(r, c.side);
      const headers = layer !== 2 && !(layer === 0 && etype === 0);
      const readRequest = offending !== null && (offending[0]! & 0x80) === 0 && (offending[1]! & 0x0f) === Opcode.READ_REQUEST;
      const withR = headers && layer === 0 && etype === 1 && readRequest;
      expect({ m: t.m, d: t.d, r: t.r }).toEqual({ m: headers, d: headers, r: withR });
      if (headers) {
        expect(offending).not.toBeNull();
        const hdr = (offending![0]! & 0x80) !== 0 ? 14 : 18;
        expect(t.segmentLength).toBe(offending!.length);
        expect(hex(t.ddpHeader!)).toBe(hex(offending!.subarray(0, hdr)));
        if (withR) expect(hex(t.rdmaHeader!)).toBe(hex(offending!.subarray(18, 46)));
        expect(mine[0]!.ulpdu.length).toBe(18 + 4 + 2 + hdr + (withR ? 28 : 0));
      } else {
        expect(mine[0]!.ulpdu.length).toBe(22);
      }
      // The peer receives it with the same code, stops, and flushes what it had outstanding.
      const received = ev.findIndex((e) => e.type === 'terminate-received');
      expect(ev[received]).toMatchObject({ type: 'terminate-received', side: peer, layer, etype, code });
      expect(ev.filter((e) => e.type === 'terminate-received')).toHaveLength(1);
      const late = ev.slice(received).filter((e): e is Completion => e.type === 'completion' && e.side === peer);
      expect(late.filter((e) => e.status !== 'flushed')).toEqual([]);
      expect(ev.slice(received).filter((e) => e.type === 'placement' && e.side === peer)).toEqual([]);
      // Nothing more goes out of the peer after the Terminate arrived.
      expect(ev.slice(received).filter((e) => e.type === 'fpdu-sent' && e.side === peer)).toEqual([]);
    }

    // After the error the detecting side places nothing and completes nothing successfully (§5.6).
    const after = ev.slice(errorAt + 1).filter((e) => e.side === c.side);
    expect(after.filter((e) => e.type === 'placement')).toEqual([]);
    expect(after.filter((e) => e.type === 'completion' && e.status !== 'flushed')).toEqual([]);
    expect(after.filter((e) => e.type === 'fpdu-sent' && e.opcode !== Opcode.TERMINATE)).toEqual([]);
    // No memory written outside what the STag table and the receive queue allow.
    expectPlacementsAllowed(r);
    // Every posted op completes exactly once; the op posted after the error is flushed.
    for (const s of ['initiator', 'responder'] as const) expectEveryOpCompletes(r, s);
    if (r.link.established) {
      const lastOp = r.scenario.ops.length - 1;
      const lastDone = ev.filter((e): e is Completion => e.type === 'completion' && e.op === lastOp && SEND_QUEUE_KINDS.has(e.kind));
      expect(lastDone.map((e) => e.status)).toEqual(['flushed']);
      expect(ev.filter((e) => e.type === 'completion' && e.status === 'success' && e.kind === 'recv' && e.op === lastOp)).toEqual([]);
    }
  });

  test('ALL_ERROR_CODES is covered by the table (apart from the listed untriggerable codes)', () => {
    const covered = new Set(CASES.map((c) => formatErrorCode({ layer: c.error[0], etype: c.error[1], code: c.error[2] })));
    const missing = ALL_ERROR_CODES.map(formatErrorCode).filter((k) => !covered.has(k) && !NOT_TRIGGERABLE.has(k));
    expect(missing).toEqual([]);
    // Every row names a code the model defines, and the exclusions are real codes.
    const defined = new Set(ALL_ERROR_CODES.map(formatErrorCode));
    expect([...covered].filter((k) => !defined.has(k))).toEqual([]);
    expect([...NOT_TRIGGERABLE.keys()].filter((k) => !defined.has(k) || covered.has(k))).toEqual([]);
    expect(NOT_TRIGGERABLE.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Terminate contents on the wire (spec/ddp-rdmap.md §2.4)

/** The single Terminate of a side and the peer ULPDU it reports. */
function terminateOf(r: ScenarioResult, side: Side): { term: WireTerminate; offending: Uint8Array } {
  const terms = wireTerminates(r, side);
  expect(terms).toHaveLength(1);
  const offending = offendingUlpdu(r, side);
  expect(offending).not.toBeNull();
  return { term: terms[0]!, offending: offending! };
}

describe('Terminate contents (spec/ddp-rdmap.md §2.4)', () => {
  const badWrite = (rdmap: Record<string, unknown> = {}) =>
    run(scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 300 }, ['bad-stag'], { options: { rdmap } }));

  test('DDP tagged error on a Write: M=1 D=1 R=0, segment length = ULPDU_Length, the 14-octet tagged header copied', () => {
    const r = badWrite();
    const { term, offending } = terminateOf(r, 'responder');
    const t = term.fields;
    expect([t.layer, t.etype, t.code]).toEqual([1, 1, 0]);
    expect({ m: t.m, d: t.d, r: t.r }).toEqual({ m: true, d: true, r: false });
    expect(offending.length).toBe(14 + 300);
    expect(t.segmentLength).toBe(314);
    expect(t.ddpHeader).toHaveLength(14);
    expect(hex(t.ddpHeader!)).toBe(hex(offending.subarray(0, 14)));
    expect(t.ddpHeader![0]).toBe(0xc1);
    expect(t.ddpHeader![1]).toBe(0x40);
    expect(t.rdmaHeader).toBeNull();
    // Terminate control word: M|D, the 13 reserved bits zero.
    expect(hex(term.ulpdu.subarray(18, 24))).toBe('1100c000013a');
    expect(term.ulpdu).toHaveLength(18 + 4 + 2 + 14);
  });

  test("termSegLen 'payload': the segment length is ULPDU_Length − 14", () => {
    const r = badWrite({ termSegLen: 'payload' });
    const { term, offending } = terminateOf(r, 'responder');
    expect(term.fields.segmentLength).toBe(offending.length - 14);
    expect(term.fields.segmentLength).toBe(300);
    expect(hex(term.fields.ddpHeader!)).toBe(hex(offending.subarray(0, 14)));
  });

  test("termSegLen 'payload' on an untagged Send: ULPDU_Length − 18", () => {
    const r = run(scenario({ from: 'initiator', op: 'send', length: 100 }, ['bad-msn'], { options: { rdmap: { termSegLen: 'payload' } } }));
    const { term, offending } = terminateOf(r, 'responder');
    expect([term.fields.layer, term.fields.etype, term.fields.code]).toEqual([1, 2, 3]);
    expect(term.fields.segmentLength).toBe(offending.length - 18);
    expect(term.fields.segmentLength).toBe(100);
  });

  test('RDMAP Remote Protection on a Read Request: M=D=R=1, the 18-octet DDP header and the 28-octet Read Request header (original values)', () => {
    const r = run(scenario(READ({ offset: 16, length: 200, localOffset: 32 }), ['out-of-bounds']));
    const { term, offending } = terminateOf(r, 'responder');
    const t = term.fields;
    expect([t.layer, t.etype, t.code]).toEqual([0, 1, 1]);
    expect({ m: t.m, d: t.d, r: t.r }).toEqual({ m: true, d: true, r: true });
    expect(offending).toHaveLength(46);
    expect(t.segmentLength).toBe(46);
    expect(t.ddpHeader).toHaveLength(18);
    expect(hex(t.ddpHeader!)).toBe(hex(offending.subarray(0, 18)));
    // QN 1, MSN 1 (the RTR was a Write), MO 0, L = 1, opcode 0x1.
    expect(hex(t.ddpHeader!)).toBe('4141' + '00000000' + '00000001' + '00000001' + '00000000');
    expect(t.rdmaHeader).toHaveLength(28);
    expect(hex(t.rdmaHeader!)).toBe(hex(offending.subarray(18, 46)));
    // Original values: Sink STag 0x200, Sink TO 32, size 200, Source STag 0x100, Source TO = the region's length (out-of-bounds).
    const v = new DataView(t.rdmaHeader!.buffer, t.rdmaHeader!.byteOffset, 28);
    expect([v.getUint32(0), v.getBigUint64(4), v.getUint32(12), v.getUint32(16), v.getBigUint64(20)]).toEqual([0x200, 32n, 200, 0x100, 4096n]);
    expect(term.ulpdu).toHaveLength(18 + 4 + 2 + 18 + 28);
  });

  test('RDMAP Remote Protection on a Send with Invalidate: M=D=1, R=0, the untagged header carries the Invalidate STag', () => {
    const r = run(scenario({ from: 'initiator', op: 'send-invalidate', invalidate: '0x500', length: 16 }));
    const { term, offending } = terminateOf(r, 'responder');
    expect({ m: term.fields.m, d: term.fields.d, r: term.fields.r }).toEqual({ m: true, d: true, r: false });
    expect(hex(term.fields.ddpHeader!)).toBe(hex(offending.subarray(0, 18)));
    expect(hex(term.fields.ddpHeader!.subarray(0, 6))).toBe('414400000500');
  });

  test('IRD overflow (0x0/0x2/0x07) on a Read Request: M=D=1, R=0, the third Read Request reported', () => {
    const r = run(CASES.find((c) => c.name.includes('beyond responder IRD'))!.scenario);
    expect(r.link.connection.responder.ird).toBe(2);
    const { term, offending } = terminateOf(r, 'responder');
    const t = term.fields;
    expect([t.layer, t.etype, t.code]).toEqual([0, 2, 7]);
    expect({ m: t.m, d: t.d, r: t.r }).toEqual({ m: true, d: true, r: false });
    expect(t.segmentLength).toBe(46);
    expect(hex(t.ddpHeader!)).toBe(hex(offending.subarray(0, 18)));
    // The third Read Request: QN 1, MSN 3.
    expect(new DataView(t.ddpHeader!.buffer, t.ddpHeader!.byteOffset).getUint32(10)).toBe(3);
    expect(t.rdmaHeader).toBeNull();
    expect(term.ulpdu).toHaveLength(42);
    // No Read was answered; all four are flushed at the initiator.
    expect(r.events.filter((e) => e.type === 'placement' && e.side === 'initiator')).toEqual([]);
    const reads = r.events.filter((e): e is Completion => e.type === 'completion' && e.kind === 'read');
    expect(reads.map((e) => e.status)).toEqual(['flushed', 'flushed', 'flushed', 'flushed']);
  });

  test('the first two Read Requests within IRD 2 are answered when nothing exceeds it', () => {
    const s = CASES.find((c) => c.name.includes('beyond responder IRD'))!.scenario;
    const r = run({ ...s, ops: s.ops!.slice(0, 3) });
    expect(r.events.filter((e) => e.type === 'terminate-sent')).toEqual([]);
    const reads = r.events.filter((e): e is Completion => e.type === 'completion' && e.kind === 'read');
    expect(reads.map((e) => e.status)).toEqual(['success', 'success']);
  });

  test('§5.6: every segment after the error is silently dropped (pipelined Write, Send, Read after a bad Write)', () => {
    const r = run({
      regions: REGIONS,
      receives: RECEIVES,
      pipeline: true,
      ops: [
        { from: 'initiator', op: 'write', stag: '0x100', length: 64 },
        { from: 'initiator', op: 'write', stag: '0x100', offset: 128, length: 64 },
        { from: 'initiator', op: 'send', length: 32 },
        READ({ offset: 512 }),
      ],
      faults: [{ op: 0, kind: 'bad-stag' }],
    });
    // The later FPDUs did reach the responder ...
    expect(r.events.filter((e) => e.type === 'fpdu-sent' && e.side === 'initiator' && e.op !== null).map((e) => (e.type === 'fpdu-sent' ? e.op : -1))).toEqual([0, 1, 2, 3]);
    // ... and were dropped: nothing placed, no receive completed, no Read answered, one Terminate.
    expect(r.events.filter((e) => e.type === 'placement')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'completion' && e.side === 'responder')).toEqual([]);
    expect(r.segments.filter((s) => s.kind === 'fpdu' && s.from === 'responder').map((s) => s.opcode)).toEqual([Opcode.TERMINATE]);
    expect(r.events.filter((e) => e.type === 'terminate-sent')).toMatchObject([{ side: 'responder', layer: 1, etype: 1, code: 0, op: 0 }]);
    // The Read was outstanding when the Terminate arrived: flushed.
    const read = r.events.filter((e): e is Completion => e.type === 'completion' && e.op === 3);
    expect(read.map((e) => e.status)).toEqual(['flushed']);
    expect(offendingUlpdu(r, 'responder')).toEqual(deframe(r, 'initiator')[1]!.ulpdu);
  });

  test('LLP CRC error: M=D=R=0 and a 22-octet ULPDU', () => {
    const r = run(scenario({ from: 'initiator', op: 'write', stag: '0x100', length: 64 }, ['corrupt-crc']));
    const terms = wireTerminates(r, 'responder');
    expect(terms).toHaveLength(1);
    const t = terms[0]!;
    expect(t.ulpdu).toHaveLength(22);
    expect({ m: t.fields.m, d: t.fields.d, r: t.fields.r }).toEqual({ m: false, d: false, r: false });
    expect(hex(t.ulpdu.subarray(18))).toBe('20020000');
    expect(hex(t.ulpdu.subarray(0, 18))).toBe('4147' + '00000000' + '00000002' + '00000001' + '00000000');
  });

  test('RDMAP local catastrophic (abort): no copied headers', () => {
    const r = run(scenario({ from: 'initiator', op: 'abort' }));
    const terms = wireTerminates(r, 'initiator');
    expect(terms).toHaveLength(1);
    expect(hex(terms[0]!.ulpdu.subarray(18))).toBe('00000000');
  });

  test('§2.4 example: DDP Invalid STag on a 512-octet Write to STag 0xDEADBEEF at TO 0x1000, exact Terminate FPDU', () => {
    const r = run({ connection: { rtr: null }, ops: [{ from: 'initiator', op: 'write', stag: '0xdeadbeef', offset: '0x1000', length: 512 }] });
    expect(r.link.connection.responderToInitiator.markers).toBe(false);
    expect(r.link.connection.crc).toBe(true);
    const terms = r.segments.filter((s) => s.kind === 'fpdu' && s.from === 'responder');
    expect(terms).toHaveLength(1);
    expect(terms[0]!.opcode).toBe(Opcode.TERMINATE);
    expect(hex(terms[0]!.payload)).toBe('0026414700000000000000020000000100000000' + '1100c000' + '020e' + 'c140deadbeef0000000000001000' + '84bb2100');
    expect(r.events.filter((e) => e.type === 'terminate-received')).toMatchObject([{ side: 'initiator', layer: 1, etype: 1, code: 0 }]);
  });
});

// ---------------------------------------------------------------------------------------------
// RFC 7306 switched off (spec/README.md, option rfc7306)

describe('an RNIC without RFC 7306 (options.rdmap.rfc7306 false)', () => {
  const WITHOUT_7306 = RdmapOptionsSchema.parse({ rfc7306: false });
  const TARGET_STAG = 0x100;
  const TARGET_LENGTH = 4096;
  const RECEIVE_LENGTH = 256;
  /** Ethernet-sized TCP segments and the default datapath width; neither matters to the checks. */
  const EMSS = 1460;
  const WIDTH = 8;
  const ALL_ONES_64 = (1n << 64n) - 1n;
  const OP = 0;
  const NEXT_OP = 1;

  /** Both Immediate Data opcodes and both atomics: the only work requests that use RFC 7306. */
  const RFC7306_WRS: readonly (readonly [string, WorkRequest])[] = [
    ['Immediate Data', { kind: 'immediate', id: OP, solicited: false, data: new Uint8Array(IMMEDIATE_DATA_SIZE) }],
    ['Immediate Data with SE', { kind: 'immediate', id: OP, solicited: true, data: new Uint8Array(IMMEDIATE_DATA_SIZE) }],
    [
      'FetchAdd',
      { kind: 'atomic', id: OP, aopcode: AOpCode.FETCH_ADD, stag: TARGET_STAG, to: 0n, addSwapData: 1n, addSwapMask: 0n, compareData: 0n, compareMask: ALL_ONES_64, localStag: null, localTo: 0n },
    ],
    [
      'CmpSwap',
      { kind: 'atomic', id: OP, aopcode: AOpCode.CMP_SWAP, stag: TARGET_STAG, to: 0n, addSwapData: 5n, addSwapMask: ALL_ONES_64, compareData: 0n, compareMask: ALL_ONES_64, localStag: null, localTo: 0n },
    ],
  ];

  /** A connection past its RTR, the responder with a target region and a receive buffer. */
  function connect(options: Record<Side, RdmapOptions>): { link: IwarpLink; responder: Rnic } {
    const rnics = { initiator: new Rnic('initiator', options.initiator), responder: new Rnic('responder', options.responder) };
    rnics.responder.stags.register({ stag: TARGET_STAG, base: rnics.responder.allocate(TARGET_LENGTH), length: BigInt(TARGET_LENGTH), access: [...ALL_REMOTE] });
    const link = new IwarpLink({ mpa: { initiatorIsn: DEFAULT_ISN.initiator, responderIsn: DEFAULT_ISN.responder }, emss: EMSS, width: WIDTH, rnics });
    link.endpoint('responder').postReceive(RECEIVE_LENGTH);
    link.run();
    return { link, responder: rnics.responder };
  }

  test.each(RFC7306_WRS)('its requester refuses to post %s with an error naming the option, and stays usable', (_, wr) => {
    const { link } = connect({ initiator: WITHOUT_7306, responder: WITHOUT_7306 });
    const ep = link.endpoint('initiator');
    const mark = link.events.length;
    expect(() => ep.post(wr)).toThrow(/rfc7306/);
    link.run();
    // Nothing was queued: no FPDU, no completion.
    expect(link.events.slice(mark)).toEqual([]);
    ep.post({ kind: 'write', id: NEXT_OP, stag: TARGET_STAG, to: 0n, data: new Uint8Array(RECEIVE_LENGTH) });
    link.run();
    expect(link.events.filter((e) => e.type === 'completion' && e.side === 'initiator' && e.op === NEXT_OP)).toMatchObject([{ status: 'success' }]);
    expect(link.events.filter((e) => e.type === 'terminate-sent')).toEqual([]);
  });

  test.each(RFC7306_WRS)('%s from a peer with RFC 7306 gets Terminate 0x0/0x2/0x06 (Unexpected OpCode) with its DDP header', (_, wr) => {
    const { link, responder } = connect({ initiator: DEFAULT_RDMAP_OPTIONS, responder: WITHOUT_7306 });
    const target = responder.stags.lookup(TARGET_STAG)!.base;
    const before = responder.memory.digest(target, TARGET_LENGTH);
    link.endpoint('initiator').post(wr);
    link.run();
    const unexpected = { layer: RdmapError.UNEXPECTED_OPCODE.layer, etype: RdmapError.UNEXPECTED_OPCODE.etype, code: RdmapError.UNEXPECTED_OPCODE.code };
    expect(link.events.filter((e) => e.type === 'terminate-sent')).toMatchObject([{ side: 'responder', ...unexpected }]);
    expect(link.events.filter((e) => e.type === 'terminate-received')).toMatchObject([{ side: 'initiator', ...unexpected }]);
    // Nothing of it reaches the responder's memory or its ULP.
    expect(link.events.filter((e) => e.side === 'responder' && (e.type === 'placement' || e.type === 'completion'))).toEqual([]);
    expect(responder.memory.digest(target, TARGET_LENGTH)).toBe(before);
    // The Terminate on the wire copies the offending untagged DDP header (spec/ddp-rdmap.md §2.4).
    const offending = deframeLink(link, 'initiator').at(-1)!;
    const terms = deframeLink(link, 'responder').filter(isTerminateUlpdu);
    expect(terms).toHaveLength(1);
    const t = decodeTerminate(terms[0]!.subarray(UNTAGGED_HEADER_SIZE))!;
    expect(t).toMatchObject({ ...unexpected, m: true, d: true, r: false, segmentLength: offending.length });
    expect(hex(t.ddpHeader!)).toBe(hex(offending.subarray(0, UNTAGGED_HEADER_SIZE)));
  });
});

/** The ULPDUs one side of a link sent, deframed from its wire octets. */
function deframeLink(link: IwarpLink, from: Side): Uint8Array[] {
  const c = link.connection;
  const deframer = new MpaDeframer(from === 'initiator' ? c.initiatorToResponder : c.responderToInitiator);
  return link.segments
    .filter((s) => s.kind === 'fpdu' && s.from === from)
    .flatMap((s) => deframer.push(s.payload))
    .flatMap((e) => (e.kind === 'fpdu' ? [e.ulpdu] : []));
}
