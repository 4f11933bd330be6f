import { describe, expect, test } from 'vitest';
import { ZodError } from 'zod';
import { decodeDdpHeader, type DdpHeader, type UntaggedHeader } from '../../ts-model/ddp/header';
import { IwarpLink } from '../../ts-model/link/iwarp-link';
import { MpaDeframer } from '../../ts-model/mpa';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { Opcode, rdmapOpcode } from '../../ts-model/rdmap/constants';
import { decodeAtomicResponse, decodeReadRequest, decodeTerminate } from '../../ts-model/rdmap/headers';
import type { RnicEvent, Side } from '../../ts-model/rnic/events';
import { RdmapOptionsSchema } from '../../ts-model/rnic/options';
import { Rnic } from '../../ts-model/rnic/rnic';
import { runScenario, type ScenarioResult } from '../../ts-model/scenario/run';
import { parseScenario, ScenarioSchema, type ScenarioInput } from '../../ts-model/scenario/schema';
import { hex, unhex } from '../support/random';
import { loadVectors } from '../support/vectors';

// -------------------------------------------------------------------------------------------------
// Helpers

const run = (input: ScenarioInput): ScenarioResult => runScenario(parseScenario(input));

type Completion = Extract<RnicEvent, { type: 'completion' }>;
type Placement = Extract<RnicEvent, { type: 'placement' }>;
type TermEvent = Extract<RnicEvent, { type: 'terminate-sent' | 'terminate-received' }>;

const completions = (r: ScenarioResult, side?: Side): Completion[] =>
  r.events.filter((e): e is Completion => e.type === 'completion' && (side === undefined || e.side === side));
const placements = (r: ScenarioResult, side?: Side): Placement[] =>
  r.events.filter((e): e is Placement => e.type === 'placement' && (side === undefined || e.side === side));
const terminatesSent = (r: ScenarioResult): TermEvent[] => r.events.filter((e): e is TermEvent => e.type === 'terminate-sent');
const code = (e: { layer: number; etype: number; code: number }): string => `0x${e.layer.toString(16)}/0x${e.etype.toString(16)}/0x${e.code.toString(16).padStart(2, '0')}`;

interface WireUlpdu {
  readonly from: Side;
  readonly ulpdu: Uint8Array;
  readonly header: DdpHeader;
  readonly opcode: number;
}

/** Every ULPDU on the wire, in transmission order, recovered by MPA-deframing each direction's TCP payload. */
function wire(r: ScenarioResult): WireUlpdu[] {
  const deframers: Record<Side, MpaDeframer> = {
    initiator: new MpaDeframer(r.link.connection.initiatorToResponder),
    responder: new MpaDeframer(r.link.connection.responderToInitiator),
  };
  const out: WireUlpdu[] = [];
  for (const s of r.segments) {
    if (s.kind !== 'fpdu') continue;
    for (const ev of deframers[s.from].push(s.payload)) {
      if (ev.kind !== 'fpdu') continue;
      const header = decodeDdpHeader(ev.ulpdu);
      if (!header) throw new Error('undecodable ULPDU on the wire');
      out.push({ from: s.from, ulpdu: ev.ulpdu, header, opcode: rdmapOpcode(ev.ulpdu[1]!) });
    }
  }
  return out;
}
const from = (w: WireUlpdu[], side: Side) => w.filter((u) => u.from === side);
const untaggedOf = (u: WireUlpdu): UntaggedHeader => {
  if (u.header.tagged) throw new Error('expected an untagged ULPDU');
  return u.header;
};

/** FNV-1a 64, computed independently of HostMemory.digest (BigInt). */
function fnv1a64(b: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const x of b) h = ((h ^ BigInt(x)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}
/** `length` octets of zero with `parts` written at their offsets. */
function image(length: number, parts: [number, Uint8Array][]): Uint8Array {
  const out = new Uint8Array(length);
  for (const [at, b] of parts) out.set(b, at);
  return out;
}
const digestOf = (r: ScenarioResult, at: Side, stag: number): string => {
  const m = r.memory.find((x) => x.at === at && Number(x.stag) === stag);
  if (!m) throw new Error(`no region 0x${stag.toString(16)} at the ${at}`);
  return m.digest;
};
const region = (r: ScenarioResult, at: Side, stag: number) => r.memory.find((x) => x.at === at && Number(x.stag) === stag)!;
const le64 = (v: bigint): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, v, true);
  return b;
};
const be64 = (v: bigint): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, v, false);
  return b;
};
const pattern = (n: number, salt: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + salt * 17 + 5) & 0xff);
const ALL = ['remote-write', 'remote-read', 'remote-atomic', 'local-write', 'local-read'] as const;

// -------------------------------------------------------------------------------------------------
describe('every opcode 0x0–0xB on the wire with the right completions and memory', () => {
  // Receive buffers are allocated from the responder RNIC's free space (no responder region is
  // allocated: they all have explicit bases), 4 KiB apart; the region WINDOW covers the first 8.
  const WRITE_DATA = pattern(128, 1);
  const SEND_DATA = [pattern(40, 2), pattern(33, 3), pattern(7, 4), pattern(64, 5)];
  const IMM = ['1122334455667788', '0102030405060708'];
  const scenario: ScenarioInput = {
    connection: { rtr: null },
    regions: [
      { at: 'responder', stag: 0x100, base: '0x40000000', length: 4096, access: ['remote-write', 'remote-read', 'remote-atomic'] },
      { at: 'responder', stag: 0x300, base: '0x40010000', length: 64, access: ['remote-write'] },
      { at: 'responder', stag: 0x400, base: '0x40020000', length: 64, access: ['remote-write'] },
      { at: 'responder', stag: 0x900, base: '0x10000000', length: 0x8000, access: [] },
      { at: 'initiator', stag: 0x200, base: '0x50000000', length: 512, access: ['local-write'] },
    ],
    receives: [{ at: 'responder', length: 256, count: 8 }],
    ops: [
      { from: 'initiator', op: 'write', stag: 0x100, data: hex(WRITE_DATA) },
      { from: 'initiator', op: 'read', stag: 0x100, length: 128, localStag: 0x200 },
      { from: 'initiator', op: 'send', data: hex(SEND_DATA[0]!) },
      { from: 'initiator', op: 'send-invalidate', invalidate: 0x300, data: hex(SEND_DATA[1]!) },
      { from: 'initiator', op: 'send-se', data: hex(SEND_DATA[2]!) },
      { from: 'initiator', op: 'send-se-invalidate', invalidate: 0x400, data: hex(SEND_DATA[3]!) },
      { from: 'initiator', op: 'immediate', data: IMM[0] },
      { from: 'initiator', op: 'immediate-se', data: IMM[1] },
      { from: 'initiator', op: 'fetch-add', stag: 0x100, offset: 64, add: 5, localStag: 0x200, localOffset: 256 },
      { from: 'initiator', op: 'abort' },
    ],
  };
  const r = run(scenario);
  const w = wire(r);

  test('opcodes 0x0–0xB all appear, each with its T bit and queue', () => {
    expect([...new Set(w.map((u) => u.opcode))].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    for (const u of w) {
      const tagged = u.opcode === Opcode.WRITE || u.opcode === Opcode.READ_RESPONSE;
      expect(u.header.tagged).toBe(tagged);
      if (!u.header.tagged) {
        const qn = { 1: 1, 10: 1, 7: 2, 11: 3 }[u.opcode] ?? 0;
        expect(u.header.qn).toBe(qn);
        expect(u.header.last).toBe(true);
      }
    }
    // Initiator sends 0,1,3,4,5,6,8,9,10,7; responder answers with 2 and 11.
    expect(from(w, 'initiator').map((u) => u.opcode)).toEqual([0, 1, 3, 4, 5, 6, 8, 9, 10, 7]);
    expect(from(w, 'responder').map((u) => u.opcode)).toEqual([2, 11]);
  });

  test('Send with Invalidate carries the Invalidate STag at D+2; others carry 0', () => {
    const inv = from(w, 'initiator').filter((u) => u.opcode === Opcode.SEND_INVALIDATE || u.opcode === Opcode.SEND_SE_INVALIDATE);
    expect(inv.map((u) => untaggedOf(u).rsvdUlp2)).toEqual([0x300, 0x400]);
    for (const u of from(w, 'initiator')) if (!u.header.tagged && u.opcode !== 4 && u.opcode !== 6) expect(u.header.rsvdUlp2).toBe(0);
  });

  test('requester completions: write, read, 4× send, 2× immediate, atomic, all successful, in order', () => {
    const c = completions(r, 'initiator');
    expect(c.map((e) => [e.kind, e.op, e.status, e.length])).toEqual([
      ['write', 0, 'success', 128],
      ['read', 1, 'success', 128],
      ['send', 2, 'success', 40],
      ['send', 3, 'success', 33],
      ['send', 4, 'success', 7],
      ['send', 5, 'success', 64],
      ['immediate', 6, 'success', 8],
      ['immediate', 7, 'success', 8],
      ['atomic', 8, 'success', 8],
    ]);
    const orig = new DataView(WRITE_DATA.buffer).getBigUint64(64, true);
    expect(c[8]!.value).toBe(orig);
  });

  test('responder completions: recv with solicited flags and invalidatedStag, recv-immediate with the 8 octets', () => {
    const c = completions(r, 'responder');
    expect(c.map((e) => ({ kind: e.kind, op: e.op, status: e.status, length: e.length, solicited: e.solicited, inv: e.invalidatedStag, imm: e.immediate }))).toEqual([
      { kind: 'recv', op: 2, status: 'success', length: 40, solicited: false, inv: undefined, imm: undefined },
      { kind: 'recv', op: 3, status: 'success', length: 33, solicited: false, inv: 0x300, imm: undefined },
      { kind: 'recv', op: 4, status: 'success', length: 7, solicited: true, inv: undefined, imm: undefined },
      { kind: 'recv', op: 5, status: 'success', length: 64, solicited: true, inv: 0x400, imm: undefined },
      { kind: 'recv-immediate', op: 6, status: 'success', length: 8, solicited: false, inv: undefined, imm: IMM[0] },
      { kind: 'recv-immediate', op: 7, status: 'success', length: 8, solicited: true, inv: undefined, imm: IMM[1] },
    ]);
  });

  test('the abort goes out as a Terminate 0x0/0x0 with no copied headers (D=R=0)', () => {
    const t = from(w, 'initiator').at(-1)!;
    expect(t.opcode).toBe(Opcode.TERMINATE);
    expect(untaggedOf(t)).toMatchObject({ qn: 2, msn: 1, mo: 0, last: true });
    expect(decodeTerminate(t.ulpdu.subarray(18))).toMatchObject({ layer: 0, etype: 0, m: false, d: false, r: false });
    expect(r.events.filter((e) => e.type === 'terminate-received').map((e) => e.side)).toEqual(['responder']);
  });

  test('memory: the Read brings back exactly what the Write wrote; FetchAdd result and local copy', () => {
    const orig = new DataView(WRITE_DATA.buffer).getBigUint64(64, true);
    const target = WRITE_DATA.slice();
    target.set(le64(orig + 5n), 64);
    expect(digestOf(r, 'responder', 0x100)).toBe(fnv1a64(image(4096, [[0, target]])));
    // the Read ran before the atomic: it carries the original octets
    expect(digestOf(r, 'initiator', 0x200)).toBe(fnv1a64(image(512, [[0, WRITE_DATA], [256, le64(orig)]])));
    // the Read Response payload on the wire is the Write payload
    const resp = from(w, 'responder').find((u) => u.opcode === Opcode.READ_RESPONSE)!;
    expect(hex(resp.ulpdu.subarray(14))).toBe(hex(WRITE_DATA));
  });

  test("memory: each Send's data lands in the receive buffer its placement event names", () => {
    const p = placements(r, 'responder').filter((e) => e.stag === null);
    expect(p.map((e) => e.op)).toEqual([2, 3, 4, 5]);
    expect(p.map((e) => e.length)).toEqual(SEND_DATA.map((d) => d.length));
    // consecutive receive buffers, in posting order
    const base = 0x10000000n;
    expect(p.map((e) => e.address - base)).toEqual([0n, 0x1000n, 0x2000n, 0x3000n]);
    const img = image(0x8000, p.map((e, i) => [Number(e.address - base), SEND_DATA[i]!]));
    expect(digestOf(r, 'responder', 0x900)).toBe(fnv1a64(img));
    // immediate data is not placed (immDataPlacement 'cqe'): nothing else in the window
  });

  test('the invalidated regions are no longer valid', () => {
    expect(region(r, 'responder', 0x300).valid).toBe(false);
    expect(region(r, 'responder', 0x400).valid).toBe(false);
    expect(region(r, 'responder', 0x100).valid).toBe(true);
  });
});

// -------------------------------------------------------------------------------------------------
describe('Send with Invalidate', () => {
  test.each(['send-invalidate', 'send-se-invalidate'] as const)('%s: a later Write to the STag is rejected with 0x1/0x1/0x00', (op) => {
    const r = run({
      connection: { rtr: null },
      regions: [{ at: 'responder', stag: 0x3307, length: 256, access: ['remote-write'] }],
      receives: [{ at: 'responder', length: 64 }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x3307, data: 'aabbccdd' },
        { from: 'initiator', op, invalidate: 0x3307, length: 4 },
        { from: 'initiator', op: 'write', stag: 0x3307, offset: 8, data: '01020304' },
        { from: 'initiator', op: 'send', length: 4 },
      ],
    });
    expect(region(r, 'responder', 0x3307).valid).toBe(false);
    const t = terminatesSent(r);
    expect(t.map((e) => [e.side, code(e), e.op])).toEqual([['responder', '0x1/0x1/0x00', 2]]);
    // only op 0's four octets were placed
    expect(placements(r, 'responder').filter((e) => e.stag !== null).map((e) => e.op)).toEqual([0]);
    expect(digestOf(r, 'responder', 0x3307)).toBe(fnv1a64(image(256, [[0, unhex('aabbccdd')]])));
    // The Terminate copies the offending tagged header (M=D=1, R=0).
    const term = from(wire(r), 'responder').at(-1)!;
    expect(term.opcode).toBe(Opcode.TERMINATE);
    const f = decodeTerminate(term.ulpdu.subarray(18))!;
    expect(f).toMatchObject({ layer: 1, etype: 1, code: 0, m: true, d: true, r: false, segmentLength: 18 });
    expect(decodeDdpHeader(f.ddpHeader!)).toMatchObject({ tagged: true, stag: 0x3307, to: 8n });
    // The recv completion names the STag it invalidated
    expect(completions(r, 'responder').find((e) => e.op === 1)).toMatchObject({ kind: 'recv', invalidatedStag: 0x3307, solicited: op === 'send-se-invalidate' });
    // op 3 never reaches the responder's ULP
    expect(completions(r, 'responder').some((e) => e.op === 3)).toBe(false);
  });

  test('a zero-length Write to the invalidated STag is still accepted (STag not checked)', () => {
    const r = run({
      connection: { rtr: null },
      regions: [{ at: 'responder', stag: 0x3307, length: 256, access: ['remote-write'] }],
      receives: [{ at: 'responder', length: 64 }],
      ops: [
        { from: 'initiator', op: 'send-invalidate', invalidate: 0x3307 },
        { from: 'initiator', op: 'write', stag: 0x3307, length: 0 },
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    expect(region(r, 'responder', 0x3307).valid).toBe(false);
  });
});

// -------------------------------------------------------------------------------------------------
describe('zero-length messages (spec/ddp-rdmap.md §5.4)', () => {
  test('a zero-length Write to a garbage STag is accepted, no Terminate', () => {
    const r = run({ connection: { rtr: null }, ops: [{ from: 'initiator', op: 'write', stag: 0xdeadbeef, offset: '0xfffffffffffffff0', length: 0 }] });
    expect(terminatesSent(r)).toEqual([]);
    expect(completions(r).map((e) => [e.side, e.kind, e.status, e.length])).toEqual([['initiator', 'write', 'success', 0]]);
    const [u, ...rest] = wire(r);
    expect(rest).toEqual([]);
    expect(u!.ulpdu.length).toBe(14);
    expect(u!.header).toMatchObject({ tagged: true, last: true, stag: 0xdeadbeef });
    expect(placements(r)).toEqual([]);
  });

  test('a zero-length Read with a garbage Source STag gets a zero-length Read Response and completes', () => {
    const r = run({
      connection: { rtr: null },
      regions: [{ at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] }],
      ops: [
        { from: 'initiator', op: 'read', stag: 0xdeadbeef, offset: '0xffffffffffffffff', length: 0, localStag: 0x200 },
        { from: 'initiator', op: 'read', stag: 0x0badf00d, length: 0, localStag: 0x77777777 },
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    const w = wire(r);
    expect(w.map((u) => [u.from, u.opcode, u.ulpdu.length])).toEqual([
      ['initiator', Opcode.READ_REQUEST, 46],
      ['responder', Opcode.READ_RESPONSE, 14],
      ['initiator', Opcode.READ_REQUEST, 46],
      ['responder', Opcode.READ_RESPONSE, 14],
    ]);
    expect(decodeReadRequest(w[0]!.ulpdu.subarray(18))).toMatchObject({ srcStag: 0xdeadbeef, size: 0, sinkStag: 0x200 });
    // The response goes to the Sink STag, L=1
    expect(w[1]!.header).toMatchObject({ tagged: true, last: true, stag: 0x200 });
    expect(w[3]!.header).toMatchObject({ tagged: true, last: true, stag: 0x77777777 });
    expect(completions(r).map((e) => [e.side, e.kind, e.op, e.status, e.length])).toEqual([
      ['initiator', 'read', 0, 'success', 0],
      ['initiator', 'read', 1, 'success', 0],
    ]);
  });

  test('a zero-length Send consumes a receive buffer and completes with length 0', () => {
    const r = run({
      connection: { rtr: null },
      receives: [{ at: 'responder', length: 16, count: 3 }],
      ops: [
        { from: 'initiator', op: 'send', data: 'aa' },
        { from: 'initiator', op: 'send', length: 0 },
        { from: 'initiator', op: 'send-se', data: 'bb' },
        { from: 'initiator', op: 'send', data: 'cc' },
      ],
    });
    expect(completions(r, 'responder').slice(0, 3).map((e) => [e.kind, e.op, e.status, e.length])).toEqual([
      ['recv', 0, 'success', 1],
      ['recv', 1, 'success', 0],
      ['recv', 2, 'success', 1],
    ]);
    expect(completions(r, 'initiator').find((e) => e.op === 1)).toMatchObject({ kind: 'send', status: 'success', length: 0 });
    // the third Send lands in the third buffer: the zero-length one used the second
    const p = placements(r, 'responder');
    expect(p.map((e) => e.op)).toEqual([0, 2]);
    expect(p[1]!.address - p[0]!.address).toBe(0x2000n);
    // and the fourth Send finds no buffer: 0x1/0x2/0x02
    expect(terminatesSent(r).map((e) => [e.side, code(e), e.op])).toEqual([['responder', '0x1/0x2/0x02', 3]]);
    // zero-length Send on the wire: 18 octets, L=1, MSN 2
    const z = from(wire(r), 'initiator')[1]!;
    expect(z.ulpdu.length).toBe(18);
    expect(untaggedOf(z)).toMatchObject({ last: true, qn: 0, msn: 2, mo: 0 });
  });

  test.each([
    ['write', Opcode.WRITE, 14],
    ['read', Opcode.READ_REQUEST, 46],
    ['send', Opcode.SEND, 18],
  ] as const)('RTR %s: the initiator\'s first FPDU, zero length, then the first op', (rtr, opcode, length) => {
    const r = run({
      connection: { rtr },
      regions: [{ at: 'responder', stag: 0x100, length: 64, access: ['remote-write'] }],
      receives: [{ at: 'responder', length: 16, count: 2 }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x100, data: '0102' },
        { from: 'initiator', op: 'send', data: '0304' },
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    const ini = from(wire(r), 'initiator');
    expect(ini[0]!.opcode).toBe(opcode);
    expect(ini[0]!.ulpdu.length).toBe(length);
    expect(ini[0]!.header.last).toBe(true);
    if (rtr === 'read') expect(decodeReadRequest(ini[0]!.ulpdu.subarray(18)).size).toBe(0);
    expect(ini.slice(1).map((u) => u.opcode)).toEqual([Opcode.WRITE, Opcode.SEND]);
    // The RTR is not a work request of the ULP: it completes as 'rtr'.
    expect(completions(r, 'initiator').filter((e) => e.kind === 'rtr').map((e) => [e.status, e.length])).toEqual([['success', 0]]);
    expect(completions(r, 'initiator').filter((e) => e.kind !== 'rtr').map((e) => [e.kind, e.op, e.status])).toEqual([
      ['write', 0, 'success'],
      ['send', 1, 'success'],
    ]);
    // The responder answers a Read RTR with a zero-length Read Response (its first FPDU).
    const resp = from(wire(r), 'responder');
    expect(resp.map((u) => [u.opcode, u.ulpdu.length])).toEqual(rtr === 'read' ? [[Opcode.READ_RESPONSE, 14]] : []);
    // The Send RTR consumed a receive buffer: the user Send got the second one.
    const recv = completions(r, 'responder').filter((e) => e.op === 1);
    expect(recv).toMatchObject([{ kind: 'recv', length: 2, status: 'success' }]);
    // The first op's placement confirms where the user's data went
    expect(placements(r, 'responder').map((e) => e.op)).toEqual([0, 1]);
    // MSN of the user's Send: 2 after a Send RTR, else 1
    expect(untaggedOf(ini[2]!).msn).toBe(rtr === 'send' ? 2 : 1);
  });

  test('RTR send without a posted receive buffer: the responder rejects it with 0x1/0x2/0x02', () => {
    const r = run({ connection: { rtr: 'send' }, ops: [] });
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', '0x1/0x2/0x02']]);
  });

  test('rtr null: the first op\'s FPDU is the initiator\'s first FPDU', () => {
    const r = run({
      connection: { rtr: null },
      receives: [{ at: 'responder', length: 16 }],
      ops: [{ from: 'initiator', op: 'send', data: '99' }],
    });
    const ini = from(wire(r), 'initiator');
    expect(ini.map((u) => u.opcode)).toEqual([Opcode.SEND]);
    expect(untaggedOf(ini[0]!).msn).toBe(1);
    expect(completions(r).some((e) => e.kind === 'rtr')).toBe(false);
  });
});

// -------------------------------------------------------------------------------------------------
describe('MSN wrap at 2^32 (RFC 5041 §5.1)', () => {
  test('4 Sends from initialMsn 0xfffffffe carry MSN fffffffe, ffffffff, 0, 1 and are all delivered', () => {
    const r = run({
      connection: { initialMsn: '0xfffffffe' },
      receives: [{ at: 'responder', length: 32, count: 4 }],
      ops: [0, 1, 2, 3].map((i) => ({ from: 'initiator' as const, op: 'send' as const, data: `0${i}0${i}` })),
    });
    expect(terminatesSent(r)).toEqual([]);
    const sends = from(wire(r), 'initiator').filter((u) => u.opcode === Opcode.SEND);
    expect(sends.map((u) => untaggedOf(u).msn)).toEqual([0xfffffffe, 0xffffffff, 0, 1]);
    expect(completions(r, 'responder').map((e) => [e.kind, e.op, e.status, e.length])).toEqual([0, 1, 2, 3].map((i) => ['recv', i, 'success', 2]));
  });

  test('Read Requests on QN 1 and Atomic Responses on QN 3 wrap the same way', () => {
    const r = run({
      connection: { initialMsn: 4294967294 },
      pipeline: true,
      regions: [
        { at: 'responder', stag: 0x100, length: 64, access: ['remote-read', 'remote-atomic'] },
        { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] },
      ],
      ops: [
        ...[0, 1, 2, 3].map((i) => ({ from: 'initiator' as const, op: 'read' as const, stag: 0x100, length: 8, localStag: 0x200, localOffset: 8 * i })),
        ...[0, 1, 2].map(() => ({ from: 'initiator' as const, op: 'fetch-add' as const, stag: 0x100, offset: 32, add: 1 })),
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    const ini = from(wire(r), 'initiator').filter((u) => u.opcode === Opcode.READ_REQUEST || u.opcode === Opcode.ATOMIC_REQUEST);
    expect(ini.map((u) => [u.opcode, untaggedOf(u).qn, untaggedOf(u).msn])).toEqual([
      [1, 1, 0xfffffffe],
      [1, 1, 0xffffffff],
      [1, 1, 0],
      [1, 1, 1],
      [10, 1, 2],
      [10, 1, 3],
      [10, 1, 4],
    ]);
    const resp = from(wire(r), 'responder').filter((u) => u.opcode === Opcode.ATOMIC_RESPONSE);
    expect(resp.map((u) => [untaggedOf(u).qn, untaggedOf(u).msn])).toEqual([
      [3, 0xfffffffe],
      [3, 0xffffffff],
      [3, 0],
    ]);
    expect(completions(r, 'initiator').filter((e) => e.kind !== 'rtr').map((e) => [e.kind, e.op, e.status, e.value])).toEqual([
      ['read', 0, 'success', undefined],
      ['read', 1, 'success', undefined],
      ['read', 2, 'success', undefined],
      ['read', 3, 'success', undefined],
      ['atomic', 4, 'success', 0n],
      ['atomic', 5, 'success', 1n],
      ['atomic', 6, 'success', 2n],
    ]);
  });
});

// -------------------------------------------------------------------------------------------------
describe('TO arithmetic at the top of the 64-bit space (T4)', () => {
  const TOP = { at: 'responder' as const, stag: 0x7700, base: '0xffffffffffff0000', length: 0x10000, access: ['remote-write' as const], addressing: 'va' as const };

  test('a Write ending exactly at TO 2^64−1 is accepted and placed', () => {
    const data = pattern(16, 9);
    const r = run({ connection: { rtr: null }, regions: [TOP], ops: [{ from: 'initiator', op: 'write', stag: 0x7700, offset: 0x10000 - 16, data: hex(data) }] });
    expect(terminatesSent(r)).toEqual([]);
    expect(from(wire(r), 'initiator')[0]!.header).toMatchObject({ tagged: true, to: 0xfffffffffffffff0n });
    expect(placements(r, 'responder')).toMatchObject([{ address: 0xfffffffffffffff0n, length: 16 }]);
    expect(digestOf(r, 'responder', 0x7700)).toBe(fnv1a64(image(0x10000, [[0x10000 - 16, data]])));
  });

  test('a multi-segment Write ending at 2^64−1: segment TOs add up without wrapping, all placed', () => {
    const data = pattern(5000, 11);
    const r = run({ connection: { rtr: null }, regions: [TOP], ops: [{ from: 'initiator', op: 'write', stag: 0x7700, offset: 0x10000 - 5000, data: hex(data) }] });
    expect(terminatesSent(r)).toEqual([]);
    const segs = from(wire(r), 'initiator');
    expect(segs.length).toBeGreaterThan(3);
    let to = (1n << 64n) - 5000n;
    for (const s of segs) {
      expect(s.header).toMatchObject({ tagged: true, to });
      to += BigInt(s.ulpdu.length - 14);
    }
    expect(to).toBe(1n << 64n);
    expect(digestOf(r, 'responder', 0x7700)).toBe(fnv1a64(image(0x10000, [[0x10000 - 5000, data]])));
  });

  test('one octet more is TO wrap 0x1/0x1/0x03 and nothing is placed', () => {
    const r = run({ connection: { rtr: null }, regions: [TOP], ops: [{ from: 'initiator', op: 'write', stag: 0x7700, offset: 0x10000 - 16, length: 17 }] });
    expect(terminatesSent(r).map((e) => [e.side, code(e), e.op])).toEqual([['responder', '0x1/0x1/0x03', 0]]);
    expect(placements(r)).toEqual([]);
  });

  test('a Read whose source ends at 2^64−1 works; one octet more is RDMAP TO wrap 0x0/0x1/0x04', () => {
    const src = { ...TOP, access: ['remote-read' as const, 'remote-write' as const] };
    const ok = run({
      connection: { rtr: null },
      regions: [src, { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x7700, offset: 0x10000 - 8, data: '0102030405060708' },
        { from: 'initiator', op: 'read', stag: 0x7700, offset: 0x10000 - 8, length: 8, localStag: 0x200 },
      ],
    });
    expect(terminatesSent(ok)).toEqual([]);
    expect(digestOf(ok, 'initiator', 0x200)).toBe(fnv1a64(image(64, [[0, unhex('0102030405060708')]])));
    const bad = run({
      connection: { rtr: null },
      regions: [src, { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] }],
      ops: [{ from: 'initiator', op: 'read', stag: 0x7700, offset: 0x10000 - 8, length: 9, localStag: 0x200 }],
    });
    expect(terminatesSent(bad).map((e) => [e.side, code(e)])).toEqual([['responder', '0x0/0x1/0x04']]);
  });
});

// -------------------------------------------------------------------------------------------------
describe('ORD / IRD (spec/ddp-rdmap.md §7, spec/rdmap-extensions.md §5)', () => {
  const base = (ops: ScenarioInput['ops'], rdmap: Record<string, unknown> = {}): ScenarioInput => ({
    pipeline: true,
    connection: { rtr: null, initiator: { ord: 1, ird: 1 }, responder: { ird: 1, ord: 1 } },
    options: { rdmap },
    regions: [
      { at: 'responder', stag: 0x100, length: 4096, access: ['remote-read', 'remote-write', 'remote-atomic'] },
      { at: 'initiator', stag: 0x200, length: 4096, access: ['local-write'] },
    ],
    ops,
  });
  /** Outstanding Read/Atomic Requests (requests sent minus responses received) after every FPDU. */
  const outstanding = (w: WireUlpdu[]): number[] => {
    let n = 0;
    return w.map((u) => {
      if (u.opcode === Opcode.READ_REQUEST || u.opcode === Opcode.ATOMIC_REQUEST) n++;
      if ((u.opcode === Opcode.READ_RESPONSE && u.header.last) || u.opcode === Opcode.ATOMIC_RESPONSE) n--;
      return n;
    });
  };

  test('ORD 1: three pipelined Reads go out one at a time, alternating with their Responses, and complete in order', () => {
    const r = run(
      base([
        { from: 'initiator', op: 'write', stag: 0x100, data: hex(pattern(300, 1)) },
        ...[0, 1, 2].map((i) => ({ from: 'initiator' as const, op: 'read' as const, stag: 0x100, offset: 100 * i, length: 100, localStag: 0x200, localOffset: 1000 * i })),
      ]),
    );
    expect(r.link.connection.initiator.ord).toBe(1);
    expect(terminatesSent(r)).toEqual([]);
    const w = wire(r).filter((u) => u.opcode !== Opcode.WRITE);
    expect(w.map((u) => `${u.from[0]}${u.opcode}`)).toEqual(['i1', 'r2', 'i1', 'r2', 'i1', 'r2']);
    expect(Math.max(...outstanding(w))).toBe(1);
    expect(completions(r, 'initiator').map((e) => [e.kind, e.op, e.status, e.length])).toEqual([
      ['write', 0, 'success', 300],
      ['read', 1, 'success', 100],
      ['read', 2, 'success', 100],
      ['read', 3, 'success', 100],
    ]);
    const p = pattern(300, 1);
    expect(digestOf(r, 'initiator', 0x200)).toBe(fnv1a64(image(4096, [[0, p.subarray(0, 100)], [1000, p.subarray(100, 200)], [2000, p.subarray(200, 300)]])));
  });

  test("atomicCredits 'shared': a FetchAdd after a Read waits for the Read's credit", () => {
    const r = run(
      base([
        { from: 'initiator', op: 'read', stag: 0x100, length: 8, localStag: 0x200 },
        { from: 'initiator', op: 'fetch-add', stag: 0x100, offset: 8, add: 1 },
      ]),
    );
    expect(terminatesSent(r)).toEqual([]);
    expect(wire(r).map((u) => `${u.from[0]}${u.opcode}`)).toEqual(['i1', 'r2', 'i10', 'r11']);
    expect(Math.max(...outstanding(wire(r)))).toBe(1);
    expect(completions(r, 'initiator').map((e) => [e.kind, e.op, e.status])).toEqual([
      ['read', 0, 'success'],
      ['atomic', 1, 'success'],
    ]);
  });

  test("atomicCredits 'separate': the FetchAdd does not wait for the Read", () => {
    const r = run(
      base(
        [
          { from: 'initiator', op: 'read', stag: 0x100, length: 8, localStag: 0x200 },
          { from: 'initiator', op: 'fetch-add', stag: 0x100, offset: 8, add: 1 },
        ],
        { atomicCredits: 'separate', maxAtomics: 1 },
      ),
    );
    expect(terminatesSent(r)).toEqual([]);
    expect(wire(r).map((u) => `${u.from[0]}${u.opcode}`)).toEqual(['i1', 'i10', 'r2', 'r11']);
  });

  test('IRD: Reads and Atomics are processed in arrival order and answered in request order', () => {
    const r = run({
      pipeline: true,
      connection: { rtr: null },
      regions: [
        { at: 'responder', stag: 0x100, length: 64, access: ['remote-read', 'remote-write', 'remote-atomic'] },
        { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] },
      ],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x100, data: hex(le64(0x1000n)) },
        { from: 'initiator', op: 'read', stag: 0x100, length: 8, localStag: 0x200, localOffset: 0 },
        { from: 'initiator', op: 'fetch-add', stag: 0x100, add: 0x234, localStag: 0x200, localOffset: 8 },
        { from: 'initiator', op: 'read', stag: 0x100, length: 8, localStag: 0x200, localOffset: 16 },
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    const w = wire(r);
    // all three requests are outstanding at once; the responses follow in request order
    expect(w.map((u) => `${u.from[0]}${u.opcode}`)).toEqual(['i0', 'i1', 'i10', 'i1', 'r2', 'r11', 'r2']);
    // Read 1 saw the value before the atomic, Read 2 after it: processed in arrival order
    expect(digestOf(r, 'initiator', 0x200)).toBe(fnv1a64(image(64, [[0, le64(0x1000n)], [8, le64(0x1000n)], [16, le64(0x1234n)]])));
    expect(completions(r, 'initiator').map((e) => [e.kind, e.op, e.value])).toEqual([
      ['write', 0, undefined],
      ['read', 1, undefined],
      ['atomic', 2, 0x1000n],
      ['read', 3, undefined],
    ]);
  });

  test('a Read RTR takes an IRD slot too: with ORD 1 / IRD 1 pipelined Reads wait for its response', () => {
    const input = base([0, 1].map((i) => ({ from: 'initiator' as const, op: 'read' as const, stag: 0x100, offset: 8 * i, length: 8, localStag: 0x200 })));
    const r = run({ ...input, connection: { ...(input.connection as object), rtr: 'read' } });
    expect(terminatesSent(r)).toEqual([]);
    const w = wire(r);
    expect(w.map((u) => `${u.from[0]}${u.opcode}`)).toEqual(['i1', 'r2', 'i1', 'r2', 'i1', 'r2']);
    expect(Math.max(...outstanding(w))).toBe(1);
    expect(completions(r, 'initiator').map((e) => [e.kind, e.op, e.status])).toEqual([
      ['rtr', null, 'success'],
      ['read', 0, 'success'],
      ['read', 1, 'success'],
    ]);
  });

  test('IRD 1 at the responder and an initiator that asks ORD 1: no overflow Terminate', () => {
    const r = run(base([0, 1, 2, 3, 4].map((i) => ({ from: 'initiator' as const, op: 'fetch-add' as const, stag: 0x100, offset: 8 * i, add: 1 }))));
    expect(terminatesSent(r)).toEqual([]);
    expect(completions(r, 'initiator').every((e) => e.status === 'success')).toBe(true);
  });
});

// -------------------------------------------------------------------------------------------------
describe('completion order at the requester (RFC 5040 §5.5 rule 10)', () => {
  test('a Write posted after a Read completes after the Read even though it went out first', () => {
    const r = run({
      pipeline: true,
      connection: { rtr: null },
      regions: [
        { at: 'responder', stag: 0x100, length: 64, access: ['remote-read', 'remote-write'] },
        { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] },
      ],
      receives: [{ at: 'responder', length: 16 }],
      ops: [
        { from: 'initiator', op: 'read', stag: 0x100, length: 8, localStag: 0x200 },
        { from: 'initiator', op: 'write', stag: 0x100, offset: 16, data: '0102' },
        { from: 'initiator', op: 'send', data: '03' },
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    // The Write and the Send left before the Read Response arrived…
    const w = wire(r);
    expect(w.map((u) => `${u.from[0]}${u.opcode}`)).toEqual(['i1', 'i0', 'i3', 'r2']);
    // …but their completions wait for the Read.
    expect(completions(r, 'initiator').map((e) => [e.kind, e.op])).toEqual([
      ['read', 0],
      ['write', 1],
      ['send', 2],
    ]);
    // and the Read Response is the last FPDU sent before any initiator completion
    const firstCompletion = r.events.findIndex((e) => e.type === 'completion' && e.side === 'initiator');
    const lastFpdu = r.events.map((e) => e.type === 'fpdu-sent').lastIndexOf(true);
    expect(firstCompletion).toBeGreaterThan(lastFpdu);
  });
});

// -------------------------------------------------------------------------------------------------
interface SemRow {
  name: string;
  [k: string]: unknown;
}
const SEM = loadVectors<{ semantics: SemRow[] }>('atomics.json').semantics;
const sem = (id: string): SemRow => SEM.find((e) => e.name.startsWith(`${id} `))!;
const big = (row: SemRow, k: string): bigint => BigInt(row[k] as string);

describe('atomics end to end (atomics.json semantics)', () => {
  const atomicScenario = (endian: 'little' | 'big', orig: bigint, op: Record<string, unknown>): ScenarioInput => ({
    connection: { rtr: null },
    options: { rdmap: { hostMemoryEndian: endian } },
    regions: [
      { at: 'responder', stag: 0x100, length: 64, access: ['remote-write', 'remote-atomic', 'remote-read'] },
      { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] },
    ],
    ops: [
      { from: 'initiator', op: 'write', stag: 0x100, offset: 16, data: hex(endian === 'little' ? le64(orig) : be64(orig)) },
      { from: 'initiator', stag: 0x100, offset: 16, localStag: 0x200, localOffset: 8, ...op } as never,
      { from: 'initiator', op: 'read', stag: 0x100, offset: 16, length: 8, localStag: 0x200, localOffset: 24 },
    ],
  });

  const CASES: [string, Record<string, unknown>][] = [
    ['FA5', { op: 'fetch-add', add: sem('FA5').add_data, mask: sem('FA5').add_mask }],
    ['FA6', { op: 'fetch-add', add: sem('FA6').add_data, mask: sem('FA6').add_mask }],
    ['CS1', { op: 'cmp-swap', compare: sem('CS1').compare_data, compareMask: sem('CS1').compare_mask, swap: sem('CS1').swap_data, swapMask: sem('CS1').swap_mask }],
    ['CS2', { op: 'cmp-swap', compare: sem('CS2').compare_data, compareMask: sem('CS2').compare_mask, swap: sem('CS2').swap_data, swapMask: sem('CS2').swap_mask }],
    ['CS3', { op: 'cmp-swap', compare: sem('CS3').compare_data, compareMask: sem('CS3').compare_mask, swap: sem('CS3').swap_data, swapMask: sem('CS3').swap_mask }],
  ];

  for (const endian of ['little', 'big'] as const) {
    test.each(CASES)(`%s (${endian}-endian memory): new memory, returned value and match`, (id, op) => {
      const row = sem(id);
      const orig = big(row, 'original');
      const enc = endian === 'little' ? le64 : be64;
      const r = run(atomicScenario(endian, orig, op));
      expect(terminatesSent(r)).toEqual([]);
      const c = completions(r, 'initiator').find((e) => e.kind === 'atomic')!;
      expect(c).toMatchObject({ status: 'success', length: 8, value: big(row, 'returned') });
      if (id.startsWith('CS')) expect(c.match).toBe(row.match);
      else expect(c.match).toBeUndefined();
      // responder memory after the op, in its byte order
      expect(digestOf(r, 'responder', 0x100)).toBe(fnv1a64(image(64, [[16, enc(big(row, 'new_memory'))]])));
      // requester: the returned value stored locally (host order) at 8, the read-back new value at 24
      expect(digestOf(r, 'initiator', 0x200)).toBe(fnv1a64(image(64, [[8, enc(orig)], [24, enc(big(row, 'new_memory'))]])));
      // wire: the Atomic Response carries the original value big-endian
      const resp = from(wire(r), 'responder').find((u) => u.opcode === Opcode.ATOMIC_RESPONSE)!;
      expect(hex(resp.ulpdu.subarray(22, 30))).toBe(hex(be64(orig)));
      expect(decodeAtomicResponse(resp.ulpdu.subarray(18)).value).toBe(orig);
    });
  }

  test('E1: FetchAdd 5 + 3 at the memory port, little- and big-endian (IwarpLink, raw host memory)', () => {
    const e1 = sem('E1');
    for (const endian of ['little', 'big'] as const) {
      const options = RdmapOptionsSchema.parse({ hostMemoryEndian: endian });
      const rnics = { initiator: new Rnic('i', options), responder: new Rnic('r', options) };
      const target = 0x7000_0000n;
      const local = 0x8000_0000n;
      rnics.responder.stags.register({ stag: 0x100, base: target, length: 64n, access: ['remote-atomic'] });
      rnics.initiator.stags.register({ stag: 0x200, base: local, length: 64n, access: ['local-write'] });
      rnics.responder.memory.write(target, unhex(e1[`memory_${endian}_endian_before_hex`] as string));
      const link = new IwarpLink({
        mpa: { initiatorIsn: 1000, responderIsn: 5000, initiator: { rtr: ['write'] }, responder: { rtr: ['write'] } },
        emss: 1460,
        width: 8,
        rnics,
      });
      link.endpoint('initiator').post({
        kind: 'atomic',
        id: 0,
        aopcode: AOpCode.FETCH_ADD,
        stag: 0x100,
        to: 0n,
        addSwapData: BigInt('0x' + (e1.add_data_wire_hex as string)),
        addSwapMask: 0n,
        compareData: 0n,
        compareMask: (1n << 64n) - 1n,
        localStag: 0x200,
        localTo: 0n,
      });
      link.run();
      expect(hex(rnics.responder.memory.read(target, 8))).toBe(e1[`memory_${endian}_endian_after_hex`]);
      // the requester stores the returned value in its own host byte order
      expect(hex(rnics.initiator.memory.read(local, 8))).toBe(endian === 'little' ? '0500000000000000' : '0000000000000005');
      const done = link.events.filter((e): e is Completion => e.type === 'completion' && e.kind === 'atomic');
      expect(done).toMatchObject([{ status: 'success', value: 5n }]);
      // the Atomic Request carries Add Data big-endian on the wire, whatever the memory order
      const d = new MpaDeframer(link.connection.initiatorToResponder);
      const ulpdus = link.segments.filter((s) => s.kind === 'fpdu' && s.from === 'initiator').flatMap((s) => d.push(s.payload));
      const req = ulpdus.map((e) => (e.kind === 'fpdu' ? e.ulpdu : null)).find((u) => u && rdmapOpcode(u[1]!) === Opcode.ATOMIC_REQUEST)!;
      expect(hex(req.subarray(38, 46))).toBe(e1.add_data_wire_hex);
      const rd = new MpaDeframer(link.connection.responderToInitiator);
      const back = link.segments.filter((s) => s.kind === 'fpdu' && s.from === 'responder').flatMap((s) => rd.push(s.payload));
      const resp = back.map((e) => (e.kind === 'fpdu' ? e.ulpdu : null)).find((u) => u && rdmapOpcode(u[1]!) === Opcode.ATOMIC_RESPONSE)!;
      expect(hex(resp.subarray(22, 30))).toBe(e1.returned_wire_hex);
    }
  });

  test('MA1: a misaligned target is not touched, no Atomic Response, Terminate 0x0/0x2/0x07 with D=1 R=0', () => {
    const r = run({
      connection: { rtr: null },
      regions: [{ at: 'responder', stag: 0x100, base: '0x1000', length: 64, access: ['remote-write', 'remote-atomic'] }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x100, offset: 0, data: hex(le64(5n)) + hex(le64(7n)) },
        { from: 'initiator', op: 'fetch-add', stag: 0x100, offset: 4, add: 1 },
      ],
    });
    expect(terminatesSent(r).map((e) => [e.side, code(e), e.op])).toEqual([['responder', '0x0/0x2/0x07', 1]]);
    expect(from(wire(r), 'responder').map((u) => u.opcode)).toEqual([Opcode.TERMINATE]);
    const t = decodeTerminate(from(wire(r), 'responder')[0]!.ulpdu.subarray(18))!;
    expect(hex(from(wire(r), 'responder')[0]!.ulpdu.subarray(18, 20))).toBe('0207');
    expect(t).toMatchObject({ d: true, r: false });
    expect(decodeDdpHeader(t.ddpHeader!)).toMatchObject({ tagged: false, qn: 1, msn: 1, rsvdUlp: 0x4a });
    expect(digestOf(r, 'responder', 0x100)).toBe(fnv1a64(image(64, [[0, le64(5n)], [8, le64(7n)]])));
    expect(completions(r, 'initiator').find((e) => e.op === 1)?.status).toBe('flushed');
  });
});

// -------------------------------------------------------------------------------------------------
describe('every segment after the first error is dropped (spec/ddp-rdmap.md §5.6)', () => {
  const regions: ScenarioInput['regions'] = [{ at: 'responder', stag: 0x100, length: 4096, access: ['remote-write'] }];

  const crcOps: ScenarioInput['ops'] = [
    { from: 'initiator', op: 'write', stag: 0x100, length: 100 },
    { from: 'initiator', op: 'write', stag: 0x100, offset: 200, length: 100 },
    { from: 'initiator', op: 'send', length: 10 },
    { from: 'initiator', op: 'immediate' },
  ];

  test('corrupt CRC on a Write: later ops from the same side complete flushed, nothing more is placed', () => {
    const r = run({
      regions,
      receives: [{ at: 'responder', length: 64, count: 4 }],
      ops: crcOps,
      faults: [{ op: 0, kind: 'corrupt-crc' }],
    });
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', '0x2/0x0/0x02']]);
    // LLP error: the Terminate carries no copied headers
    const t = from(wire(r), 'responder');
    expect(t.map((u) => u.opcode)).toEqual([Opcode.TERMINATE]);
    expect(decodeTerminate(t[0]!.ulpdu.subarray(18))).toMatchObject({ layer: 2, etype: 0, code: 2, m: false, d: false, r: false });
    expect(placements(r, 'responder')).toEqual([]);
    expect(completions(r, 'responder')).toEqual([]);
    expect(completions(r, 'initiator').filter((e) => e.kind !== 'rtr').map((e) => [e.op, e.status])).toEqual([
      [0, 'success'],
      [1, 'flushed'],
      [2, 'flushed'],
      [3, 'flushed'],
    ]);
    // the flushed ops never reached the wire
    expect(r.segments.filter((s) => s.kind === 'fpdu' && s.from === 'initiator').map((s) => s.op)).toEqual([null, 0]);
    expect(digestOf(r, 'responder', 0x100)).toBe(fnv1a64(new Uint8Array(4096)));
  });

  // MODEL BUG (ts-model/link/iwarp-link.ts IwarpLink.transmit): the MPA-fencing check
  // `ep.received === 0` counts only FPDUs delivered to RDMAP, so when the initiator's very first FPDU
  // fails its CRC the responder's Terminate (reported as 'terminate-sent') never goes on the wire
  // (spec/ddp-rdmap.md §5.6 "still let RDMAP transmit its Terminate"; spec/mpa.md §6, §7.4 item 5:
  // the first FPDU has arrived).
  test('corrupt CRC on the very first FPDU (rtr null): the Terminate still goes out and later ops are flushed', () => {
    const r = run({
      connection: { rtr: null },
      regions,
      receives: [{ at: 'responder', length: 64, count: 4 }],
      ops: crcOps,
      faults: [{ op: 0, kind: 'corrupt-crc' }],
    });
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', '0x2/0x0/0x02']]);
    expect(placements(r, 'responder')).toEqual([]);
    expect(completions(r, 'responder')).toEqual([]);
    // every terminate-sent event has its Terminate FPDU on the wire
    expect(from(wire(r), 'responder').map((u) => u.opcode)).toEqual([Opcode.TERMINATE]);
    expect(r.events.filter((e) => e.type === 'terminate-received').map((e) => e.side)).toEqual(['initiator']);
    expect(completions(r, 'initiator').map((e) => [e.op, e.status])).toEqual([
      [0, 'success'],
      [1, 'flushed'],
      [2, 'flushed'],
      [3, 'flushed'],
    ]);
  });

  test('corrupt CRC, pipelined: the later FPDUs are on the wire but the receiver ignores them', () => {
    const r = run({
      pipeline: true,
      connection: { rtr: null },
      regions,
      receives: [{ at: 'responder', length: 64, count: 4 }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x100, length: 100 },
        { from: 'initiator', op: 'write', stag: 0x100, offset: 200, length: 100 },
        { from: 'initiator', op: 'send', length: 10 },
      ],
      faults: [{ op: 0, kind: 'corrupt-crc' }],
    });
    expect(r.segments.filter((s) => s.kind === 'fpdu' && s.from === 'initiator').map((s) => s.op)).toEqual([0, 1, 2]);
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', '0x2/0x0/0x02']]);
    expect(placements(r, 'responder')).toEqual([]);
    expect(completions(r, 'responder')).toEqual([]);
  });

  test('a DDP error (bad STag on a Write): the valid Write and Send after it are dropped silently', () => {
    const r = run({
      pipeline: true,
      connection: { rtr: null },
      regions,
      receives: [{ at: 'responder', length: 64, count: 4 }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x100, length: 100 },
        { from: 'initiator', op: 'write', stag: 0x100, offset: 200, length: 100 },
        { from: 'initiator', op: 'send', length: 10 },
        { from: 'initiator', op: 'write', stag: 0x100, offset: 400, length: 100 },
      ],
      faults: [{ op: 1, kind: 'bad-stag' }],
    });
    // exactly one Terminate, for op 1; op 0 placed, nothing after
    expect(terminatesSent(r).map((e) => [e.side, code(e), e.op])).toEqual([['responder', '0x1/0x1/0x00', 1]]);
    expect(placements(r, 'responder').map((e) => e.op)).toEqual([0]);
    expect(completions(r, 'responder')).toEqual([]);
    expect(from(wire(r), 'responder').map((u) => u.opcode)).toEqual([Opcode.TERMINATE]);
  });
});

// -------------------------------------------------------------------------------------------------
describe('Terminate contents for request errors (spec/ddp-rdmap.md §2.4, §5.5; spec/rdmap-extensions.md §7)', () => {
  const regions: ScenarioInput['regions'] = [
    { at: 'responder', stag: 0x100, length: 64, access: ['remote-read', 'remote-atomic'] },
    { at: 'initiator', stag: 0x200, length: 64, access: ['local-write'] },
  ];

  test('Read Request with an invalid Source STag: 0x0/0x1/0x00 with M, D and R, copying the request', () => {
    const r = run({ connection: { rtr: null }, regions, ops: [{ from: 'initiator', op: 'read', stag: 0x100, length: 8, localStag: 0x200 }], faults: [{ op: 0, kind: 'bad-stag' }] });
    expect(terminatesSent(r).map((e) => [e.side, code(e), e.op])).toEqual([['responder', '0x0/0x1/0x00', 0]]);
    const req = from(wire(r), 'initiator')[0]!;
    const term = from(wire(r), 'responder')[0]!;
    const t = decodeTerminate(term.ulpdu.subarray(18))!;
    expect(t).toMatchObject({ m: true, d: true, r: true, segmentLength: 46 });
    expect(hex(t.ddpHeader!)).toBe(hex(req.ulpdu.subarray(0, 18)));
    expect(hex(t.rdmaHeader!)).toBe(hex(req.ulpdu.subarray(18, 46)));
    expect(term.ulpdu.length).toBe(70);
    expect(completions(r, 'initiator').map((e) => [e.kind, e.status])).toEqual([['read', 'flushed']]);
  });

  test.each([
    ['out-of-bounds', '0x0/0x1/0x01'],
    ['bad-stag', '0x0/0x1/0x00'],
  ] as const)('Atomic Request with %s: %s with D=1, R=0 (unlike a Read Request)', (kind, expected) => {
    const r = run({ connection: { rtr: null }, regions, ops: [{ from: 'initiator', op: 'fetch-add', stag: 0x100, add: 1 }], faults: [{ op: 0, kind }] });
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', expected]]);
    const term = from(wire(r), 'responder')[0]!;
    const t = decodeTerminate(term.ulpdu.subarray(18))!;
    expect(t).toMatchObject({ m: true, d: true, r: false, segmentLength: 70 });
    expect(hex(t.ddpHeader!)).toBe(hex(from(wire(r), 'initiator')[0]!.ulpdu.subarray(0, 18)));
    expect(term.ulpdu.length).toBe(42);
  });

  test('Send with Invalidate of a foreign-PD STag: 0x0/0x1/0x09, not delivered, the region stays valid', () => {
    const r = run({
      connection: { rtr: null },
      regions: [{ at: 'responder', stag: 0x500, pd: 3, length: 64, access: ['remote-write'] }],
      receives: [{ at: 'responder', length: 64 }],
      ops: [{ from: 'initiator', op: 'send-invalidate', invalidate: 0x500, length: 4 }],
    });
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', '0x0/0x1/0x09']]);
    expect(completions(r, 'responder')).toEqual([]);
    expect(region(r, 'responder', 0x500).valid).toBe(true);
  });

  test('Send with Invalidate of a non-invalidatable STag: 0x0/0x2/0x09, the region stays valid', () => {
    const r = run({
      connection: { rtr: null },
      regions: [{ at: 'responder', stag: 0x500, length: 64, access: ['remote-write'], invalidatable: false }],
      receives: [{ at: 'responder', length: 64 }],
      ops: [{ from: 'initiator', op: 'send-se-invalidate', invalidate: 0x500, length: 4 }],
    });
    expect(terminatesSent(r).map((e) => [e.side, code(e)])).toEqual([['responder', '0x0/0x2/0x09']]);
    expect(completions(r, 'responder')).toEqual([]);
    expect(region(r, 'responder', 0x500).valid).toBe(true);
  });
});

// -------------------------------------------------------------------------------------------------
describe('multi-segment messages on the wire (spec/ddp-rdmap.md §4)', () => {
  test('with markers and EMSS 1000: every FPDU ≤ EMSS, every ULPDU ≤ MULPDU, segments in order, data intact', () => {
    const emss = 1000;
    const WRITE = pattern(5000, 21);
    const SEND = pattern(3000, 22);
    const r = run({
      connection: { rtr: 'write', emss, initiator: { markers: true }, responder: { markers: true } },
      regions: [
        { at: 'responder', stag: 0x100, base: '0x60000000', length: 8192, access: ['remote-write', 'remote-read'] },
        { at: 'responder', stag: 0x900, base: '0x10000000', length: 4096, access: [] },
        { at: 'initiator', stag: 0x200, base: '0x7fff00000000', length: 8192, access: ['local-write'], addressing: 'va' },
      ],
      receives: [{ at: 'responder', length: 4096 }],
      ops: [
        { from: 'initiator', op: 'write', stag: 0x100, offset: 100, data: hex(WRITE) },
        { from: 'initiator', op: 'send', data: hex(SEND) },
        { from: 'initiator', op: 'read', stag: 0x100, offset: 100, length: 5000, localStag: 0x200, localOffset: 3 },
      ],
    });
    expect(terminatesSent(r)).toEqual([]);
    // EMSS 1000: MULPDU = 1000 − (6 + 4·2 + 0) = 986 (spec/mpa.md §5)
    const MULPDU = 986;
    for (const s of r.segments.filter((x) => x.kind === 'fpdu')) expect(s.payload.length).toBeLessThanOrEqual(emss);
    const w = wire(r);
    for (const u of w) expect(u.ulpdu.length).toBeLessThanOrEqual(MULPDU);
    // Write: tagged, TO = 100 + offset, L only on the last
    const writes = from(w, 'initiator').filter((u) => u.opcode === Opcode.WRITE && u.ulpdu.length > 14);
    let off = 0;
    writes.forEach((u, i) => {
      expect(u.header).toMatchObject({ tagged: true, stag: 0x100, to: BigInt(100 + off), last: i === writes.length - 1 });
      off += u.ulpdu.length - 14;
    });
    expect(off).toBe(5000);
    expect(writes[0]!.ulpdu.length).toBe(MULPDU);
    // Send: same MSN, MO = offset
    const sends = from(w, 'initiator').filter((u) => u.opcode === Opcode.SEND);
    off = 0;
    sends.forEach((u, i) => {
      expect(u.header).toMatchObject({ tagged: false, qn: 0, msn: 1, mo: off, last: i === sends.length - 1 });
      off += u.ulpdu.length - 18;
    });
    expect(off).toBe(3000);
    // Read Response: Sink STag, TO from the Sink TO (a VA region: base + 3)
    const resp = from(w, 'responder').filter((u) => u.opcode === Opcode.READ_RESPONSE);
    expect(resp.length).toBe(Math.ceil(5000 / (MULPDU - 14)));
    off = 0;
    resp.forEach((u, i) => {
      expect(u.header).toMatchObject({ tagged: true, stag: 0x200, to: 0x7fff00000003n + BigInt(off), last: i === resp.length - 1 });
      off += u.ulpdu.length - 14;
    });
    expect(off).toBe(5000);
    // memory on both sides
    expect(digestOf(r, 'responder', 0x100)).toBe(fnv1a64(image(8192, [[100, WRITE]])));
    expect(digestOf(r, 'responder', 0x900)).toBe(fnv1a64(image(4096, [[0, SEND]])));
    expect(digestOf(r, 'initiator', 0x200)).toBe(fnv1a64(image(8192, [[3, WRITE]])));
    expect(completions(r, 'responder')).toMatchObject([{ kind: 'recv', length: 3000, status: 'success' }]);
    // markers were actually on the wire
    expect(r.events.some((e) => e.type === 'fpdu-sent' && e.markers > 0)).toBe(true);
  });
});

// -------------------------------------------------------------------------------------------------
describe('determinism', () => {
  const scenario = (seed: number): ScenarioInput => ({
    seed,
    pipeline: true,
    regions: [
      { at: 'responder', stag: 0x100, length: 8192, access: ['remote-write', 'remote-read', 'remote-atomic'] },
      { at: 'initiator', stag: 0x200, length: 8192, access: ['local-write'] },
    ],
    receives: [{ at: 'responder', length: 4096, count: 2 }],
    ops: [
      { from: 'initiator', op: 'write', stag: 0x100, length: 3000 },
      { from: 'initiator', op: 'read', stag: 0x100, length: 3000, localStag: 0x200 },
      { from: 'initiator', op: 'send', length: 2000 },
      { from: 'initiator', op: 'fetch-add', stag: 0x100, offset: 4000, add: 3 },
      { from: 'initiator', op: 'immediate' },
    ],
  });
  const snapshot = (r: ScenarioResult) => ({
    events: r.events,
    segments: r.segments.map((s) => ({ ...s, payload: hex(s.payload) })),
    memory: r.memory,
    summary: r.summary,
  });

  test('the same scenario twice gives identical events, segments and memory', () => {
    expect(snapshot(run(scenario(7)))).toEqual(snapshot(run(scenario(7))));
  });

  test('a different seed changes the payload octets (and only them)', () => {
    const a = run(scenario(7));
    const b = run(scenario(8));
    const wa = from(wire(a), 'initiator');
    const wb = from(wire(b), 'initiator');
    expect(wa.map((u) => [u.opcode, u.ulpdu.length])).toEqual(wb.map((u) => [u.opcode, u.ulpdu.length]));
    const writeA = wa.filter((u) => u.opcode === Opcode.WRITE && u.header.tagged && u.header.stag === 0x100);
    const writeB = wb.filter((u) => u.opcode === Opcode.WRITE && u.header.tagged && u.header.stag === 0x100);
    expect(hex(writeA[0]!.ulpdu.subarray(14))).not.toBe(hex(writeB[0]!.ulpdu.subarray(14)));
    expect(digestOf(a, 'responder', 0x100)).not.toBe(digestOf(b, 'responder', 0x100));
    const imm = (r: ScenarioResult) => completions(r, 'responder').find((e) => e.kind === 'recv-immediate')!.immediate;
    expect(imm(a)).not.toBe(imm(b));
    // headers other than the payload are the same
    expect(a.summary.fpdus).toBe(b.summary.fpdus);
    expect(a.summary.wireOctets).toBe(b.summary.wireOctets);
  });
});

// -------------------------------------------------------------------------------------------------
describe('scenario validation names the field', () => {
  const paths = (input: unknown): string[] => {
    try {
      parseScenario(input);
    } catch (e) {
      expect(e).toBeInstanceOf(ZodError);
      return (e as ZodError).issues.map((i) => i.path.join('.'));
    }
    throw new Error('the scenario was accepted');
  };
  const write = { from: 'initiator', op: 'write', stag: 0x100, length: 4 };

  test('ops.0.stag "zz"', () => {
    expect(paths({ ops: [{ ...write, stag: 'zz' }] })).toContain('ops.0.stag');
  });
  test('a fault that does not apply to its op → faults.0.kind', () => {
    expect(paths({ ops: [write], faults: [{ op: 0, kind: 'misaligned-atomic' }] })).toEqual(['faults.0.kind']);
    expect(paths({ ops: [{ from: 'initiator', op: 'write', stag: 1, length: 0 }], faults: [{ op: 0, kind: 'out-of-bounds' }] })).toEqual(['faults.0.kind']);
  });
  test('a fault on an op that does not exist → faults.0.op', () => {
    expect(paths({ ops: [write], faults: [{ op: 1, kind: 'corrupt-crc' }] })).toEqual(['faults.0.op']);
  });
  test('bad-marker without markers → faults.0.kind', () => {
    expect(paths({ ops: [write], faults: [{ op: 0, kind: 'bad-marker' }] })).toEqual(['faults.0.kind']);
    // with markers towards the responder it is accepted
    expect(() => parseScenario({ connection: { responder: { markers: true } }, ops: [write], faults: [{ op: 0, kind: 'bad-marker' }] })).not.toThrow();
  });
  test('a duplicate STag index on one side → regions.1.stag', () => {
    const reg = { at: 'responder', stag: 0x100, length: 8, access: [] };
    expect(paths({ regions: [reg, { ...reg, stag: 0x1ff }] })).toEqual(['regions.1.stag']);
    // the same index on the other side is fine
    expect(() => parseScenario({ regions: [reg, { ...reg, at: 'initiator' }] })).not.toThrow();
  });
  test('first op from the responder with rtr null → ops.0.from', () => {
    expect(paths({ connection: { rtr: null }, ops: [{ ...write, from: 'responder' }] })).toEqual(['ops.0.from']);
    expect(() => parseScenario({ ops: [{ ...write, from: 'responder' }] })).not.toThrow();
  });
  test('a Rev 2 responder accepting no RTR type → connection.responder.acceptRtr, citing RFC 6581 §9.2', () => {
    const issuesOf = (input: unknown) => {
      const r = ScenarioSchema.safeParse(input);
      return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    };
    const none = { acceptRtr: [] };
    for (const connection of [{ responder: none }, { revision: 1, responder: { ...none, revision: 2 } }, { rtr: null, responder: none }]) {
      const issues = issuesOf({ connection });
      expect(issues.map((i) => i.path), JSON.stringify(connection)).toEqual(['connection.responder.acceptRtr']);
      expect(issues[0]!.message).toMatch(/RFC 6581 §9\.2/);
    }
    // An RFC 5044 (Rev 1) responder has no RTR options to offer.
    expect(() => parseScenario({ connection: { revision: 1, responder: none } })).not.toThrow();
    expect(() => parseScenario({ connection: { responder: { ...none, revision: 1 } } })).not.toThrow();
  });
  test('hex octets (ops.N.data) take an optional 0x or 0X prefix, as integer fields take 0x', () => {
    const OCTETS = [0x0a, 0x0b, 0xfc];
    const IMMEDIATE = [1, 2, 3, 4, 5, 6, 7, 0xff];
    const hexOf = (b: number[]) => Buffer.from(b).toString('hex');
    for (const prefix of ['', '0x', '0X']) {
      const s = parseScenario({
        ops: [
          { ...write, length: undefined, data: prefix + hexOf(OCTETS) },
          { from: 'initiator', op: 'immediate', data: prefix + hexOf(IMMEDIATE).toUpperCase() },
        ],
      });
      expect(s.ops.map((o) => ('data' in o && o.data ? Array.from(o.data) : null)), prefix).toEqual([OCTETS, IMMEDIATE]);
    }
    // Still two digits per octet, and the prefix only once, at the start.
    for (const data of ['0x0a0', '0x0x0a', '0a0x0b', 'x0a', '0x0g']) expect(paths({ ops: [{ ...write, length: undefined, data }] }), data).toEqual(['ops.0.data']);
  });
  test('Immediate Data and Atomic ops with options.rdmap.rfc7306 false → ops.N.op, naming the option', () => {
    const rfc7306Ops = [
      { from: 'initiator', op: 'immediate' },
      { from: 'initiator', op: 'immediate-se' },
      { from: 'initiator', op: 'fetch-add', stag: 0x100, add: 1 },
      { from: 'initiator', op: 'cmp-swap', stag: 0x100, compare: 0, swap: 1 },
    ];
    const off = { rdmap: { rfc7306: false } };
    const r = ScenarioSchema.safeParse({ options: off, ops: [write, ...rfc7306Ops] });
    expect(r.success).toBe(false);
    const issues = r.success ? [] : r.error.issues;
    // The Write (op 0) is fine; every RFC 7306 op after it is named.
    expect(issues.map((i) => i.path.join('.'))).toEqual(rfc7306Ops.map((_, k) => `ops.${k + 1}.op`));
    for (const i of issues) expect(i.message).toMatch(/options\.rdmap\.rfc7306/);
    expect(() => parseScenario({ ops: [write, ...rfc7306Ops] })).not.toThrow();
    expect(() => parseScenario({ options: off, ops: [write] })).not.toThrow();
  });
  test('other malformed fields', () => {
    expect(paths({ ops: [{ from: 'initiator', op: 'immediate', data: '0102' }] })).toContain('ops.0.data');
    expect(paths({ connection: { initialMsn: '0x100000000' } })).toContain('connection.initialMsn');
    expect(paths({ regions: [{ at: 'responder', stag: 1, length: 0, access: [] }] })).toContain('regions.0.length');
    expect(paths({ ops: [{ ...write, offset: '0x10000000000000000' }] })).toContain('ops.0.offset');
    expect(paths({ bogus: 1 })).toEqual(['']);
  });
});
