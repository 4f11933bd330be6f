import { z } from 'zod';
import { AccessRightSchema } from '../memory/access';
import { ADDRESSING_MODES } from '../memory/stag-table';
import { stagIndex } from '../memory/stag';
import { acceptsNoRtr, RESPONDER_RTR_REQUIRED } from '../mpa/negotiation';
import { MpaOptionsSchema } from '../mpa/options';
import { RdmapOptionsSchema } from '../rnic/options';
import { HEX_OCTETS, parseHexOctets } from '../util/hex';

/**
 * Scenario files: JSON validated by zod, so every mistake is reported with the path of the field.
 * Integers are JSON numbers or "0x…"/decimal strings; 64-bit values are strings (JSON numbers lose
 * precision above 2^53). Octet strings are hex, two digits per octet, optionally "0x…".
 */

const INTEGER = /^(0x[0-9a-fA-F]+|[0-9]+)$/;
const integerString = z.string().regex(INTEGER, 'expected a decimal or 0x… integer');

/** An unsigned integer of at most `bits` bits, as a number. */
const uint = (bits: 8 | 16 | 32) =>
  z
    .union([z.number(), integerString.transform((s) => Number(s))], { error: `expected a ${bits}-bit unsigned integer: a JSON number or a "0x…" string` })
    .pipe(z.number().int().min(0).max(2 ** bits - 1));

/** A 64-bit unsigned value, as a bigint. */
const u64 = z
  .union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), integerString], {
    error: 'expected a 64-bit unsigned integer: a "0x…" or decimal string (or a JSON number below 2^53)',
  })
  .transform((v) => BigInt(v))
  .pipe(z.bigint().min(0n).max((1n << 64n) - 1n));

const ALL_ONES_64 = (1n << 64n) - 1n;
const hexBytes = z
  .string()
  .regex(HEX_OCTETS, 'expected hex octets, two digits each, e.g. "0a0b0c" or "0x0a0b0c"')
  .transform((s) => parseHexOctets(s));

export const SideSchema = z.enum(['initiator', 'responder']);
export type ScenarioSide = z.infer<typeof SideSchema>;
export const RtrSchema = z.enum(['write', 'read', 'send']);

const irdOrd = z.number().int().min(0).max(0x3fff);

const EndpointSchema = z
  .object({
    isn: uint(32).optional(),
    /** This side wants markers in what it receives (its M bit). */
    markers: z.boolean().default(false),
    /** This side asks for CRC-32C (its C bit). */
    crc: z.boolean().default(true),
    ird: irdOrd.default(16),
    ord: irdOrd.default(16),
    /** Protection domain of this side's stream. */
    pd: z.number().int().min(0).default(0),
    /** Highest MPA revision this side speaks; defaults to connection.revision. */
    revision: z.union([z.literal(1), z.literal(2)]).optional(),
    /** Responder: the RTR types it accepts (default all three; at least one at Rev 2, RFC 6581 §9.2). */
    acceptRtr: z.array(RtrSchema).optional(),
  })
  .strict();

const ConnectionSchema = z
  .object({
    revision: z.union([z.literal(1), z.literal(2)]).default(2),
    /** The RFC 6581 RTR the initiator sends first (peer-to-peer); null: client-server, no RTR. */
    rtr: RtrSchema.nullable().default('write'),
    emss: z.number().int().min(128).max(65495).default(1460),
    /** First MSN of every queue (RFC 5041: 1); e.g. "0xfffffffe" to cross the 2^32 wrap. */
    initialMsn: uint(32).default(1),
    initiator: EndpointSchema.prefault({}),
    responder: EndpointSchema.prefault({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    const revision = c.responder.revision ?? c.revision;
    if (c.responder.acceptRtr && acceptsNoRtr({ revision, rtr: c.responder.acceptRtr })) {
      ctx.addIssue({ code: 'custom', path: ['responder', 'acceptRtr'], message: `${RESPONDER_RTR_REQUIRED}; give one or more of ${RtrSchema.options.join(', ')}, or omit it for all three` });
    }
  });

const RegionSchema = z
  .object({
    at: SideSchema,
    stag: uint(32),
    length: u64.refine((v) => v > 0n, 'a region needs at least one octet'),
    access: z.array(AccessRightSchema),
    /** Host address of the first octet; allocated when absent. */
    base: u64.optional(),
    pd: z.number().int().min(0).optional(),
    addressing: z.enum(ADDRESSING_MODES).default('zero-based'),
    invalidatable: z.boolean().default(true),
  })
  .strict();

const ReceiveSchema = z
  .object({
    at: SideSchema,
    length: z.number().int().min(0).max(1 << 24),
    count: z.number().int().min(1).max(100_000).default(1),
  })
  .strict();

const MAX_MESSAGE = 1 << 24;
const payload = {
  /** Payload octets; a deterministic function of the seed unless `data` gives them. */
  length: z.number().int().min(0).max(MAX_MESSAGE).optional(),
  data: hexBytes.optional(),
};
const target = { stag: uint(32), offset: u64.default(0n) };
const local = { localStag: uint(32), localOffset: u64.default(0n) };
const from = { from: SideSchema };

const WriteOp = z.object({ ...from, op: z.literal('write'), ...target, ...payload }).strict();
const ReadOp = z.object({ ...from, op: z.literal('read'), ...target, length: z.number().int().min(0).max(0xffffffff), ...local }).strict();
const SendOp = z.object({ ...from, op: z.enum(['send', 'send-se']), ...payload }).strict();
const SendInvOp = z.object({ ...from, op: z.enum(['send-invalidate', 'send-se-invalidate']), invalidate: uint(32), ...payload }).strict();
const ImmOp = z
  .object({
    ...from,
    op: z.enum(['immediate', 'immediate-se']),
    data: hexBytes.refine((b) => b.length === 8, 'Immediate Data is exactly 8 octets').optional(),
  })
  .strict();
const optionalLocal = { localStag: uint(32).optional(), localOffset: u64.default(0n) };
const FetchAddOp = z
  .object({ ...from, op: z.literal('fetch-add'), ...target, add: u64, mask: u64.default(0n), ...optionalLocal })
  .strict();
const CmpSwapOp = z
  .object({
    ...from,
    op: z.literal('cmp-swap'),
    ...target,
    compare: u64,
    compareMask: u64.default(ALL_ONES_64),
    swap: u64,
    swapMask: u64.default(ALL_ONES_64),
    ...optionalLocal,
  })
  .strict();
/** The ULP tears the stream down: Terminate with RDMAP Local Catastrophic. */
const AbortOp = z.object({ ...from, op: z.literal('abort') }).strict();

export const OpSchema = z.discriminatedUnion('op', [WriteOp, ReadOp, SendOp, SendInvOp, ImmOp, FetchAddOp, CmpSwapOp, AbortOp]);
export type ScenarioOp = z.infer<typeof OpSchema>;
export type OpName = ScenarioOp['op'];

/** Faults on one op's traffic, and which ops each applies to. */
export const OP_FAULTS = {
  'corrupt-crc': 'any op that sends (not abort)',
  'bad-marker': 'any op, with markers on in its direction',
  'bad-stag': 'write, read, send-invalidate, send-se-invalidate, fetch-add, cmp-swap',
  'out-of-bounds': 'write or read with length > 0, fetch-add, cmp-swap',
  'bad-ddp-version': 'any op that sends',
  'bad-rdmap-version': 'any op that sends',
  'bad-opcode': 'any op that sends',
  'misaligned-atomic': 'fetch-add, cmp-swap',
  'no-receive-buffer': 'send variants, immediate variants',
  'bad-qn': 'untagged ops: send and immediate variants, read, fetch-add, cmp-swap',
  'bad-msn': 'untagged ops',
  'bad-mo': 'untagged ops',
  'short-ulpdu': 'any op that sends',
  'unexpected-read-response': 'write',
  'connection-lost': 'any op that sends',
  'rnic-failure': 'any op that sends',
} as const;
/** Faults on the MPA start-up, with no op. */
export const CONNECTION_FAULTS = {
  'bad-mpa-key': 'the Request key is corrupted: the responder closes with 0x2/0x0/0x04',
  'reply-ord-exceeds-ird': 'the Reply asks for more ORD than the initiator IRD: TERM 0x2/0x0/0x06',
  'setup-failure': 'the initiator fails locally after the Reply: TERM 0x2/0x0/0x05',
} as const;

export type OpFaultKind = keyof typeof OP_FAULTS;
export type ConnectionFaultKind = keyof typeof CONNECTION_FAULTS;
const opFaultKinds = Object.keys(OP_FAULTS) as [OpFaultKind, ...OpFaultKind[]];
const connectionFaultKinds = Object.keys(CONNECTION_FAULTS) as [ConnectionFaultKind, ...ConnectionFaultKind[]];

const FaultSchema = z.union([
  z.object({ op: z.number().int().min(0), kind: z.enum(opFaultKinds) }).strict(),
  z.object({ kind: z.enum(connectionFaultKinds) }).strict(),
]);

/** Ops whose work requests exist only with RFC 7306 (Immediate Data §6, Atomics §5; rnic/work-request.ts needsRfc7306). */
const RFC7306_OPS = new Set<OpName>(['immediate', 'immediate-se', 'fetch-add', 'cmp-swap']);
const SENDS = new Set<OpName>(['write', 'read', 'send', 'send-se', 'send-invalidate', 'send-se-invalidate', 'immediate', 'immediate-se', 'fetch-add', 'cmp-swap']);
const UNTAGGED = new Set<OpName>(['send', 'send-se', 'send-invalidate', 'send-se-invalidate', 'immediate', 'immediate-se', 'read', 'fetch-add', 'cmp-swap']);
const APPLIES: Record<OpFaultKind, (op: ScenarioOp) => boolean> = {
  'corrupt-crc': (o) => SENDS.has(o.op),
  'bad-marker': (o) => SENDS.has(o.op),
  'bad-stag': (o) => ['write', 'read', 'send-invalidate', 'send-se-invalidate', 'fetch-add', 'cmp-swap'].includes(o.op),
  'out-of-bounds': (o) => o.op === 'fetch-add' || o.op === 'cmp-swap' || ((o.op === 'write' || o.op === 'read') && opLength(o) > 0),
  'bad-ddp-version': (o) => SENDS.has(o.op),
  'bad-rdmap-version': (o) => SENDS.has(o.op),
  'bad-opcode': (o) => SENDS.has(o.op),
  'misaligned-atomic': (o) => o.op === 'fetch-add' || o.op === 'cmp-swap',
  'no-receive-buffer': (o) => o.op.startsWith('send') || o.op.startsWith('immediate'),
  'bad-qn': (o) => UNTAGGED.has(o.op),
  'bad-msn': (o) => UNTAGGED.has(o.op),
  'bad-mo': (o) => UNTAGGED.has(o.op),
  'short-ulpdu': (o) => SENDS.has(o.op),
  'unexpected-read-response': (o) => o.op === 'write',
  'connection-lost': (o) => SENDS.has(o.op),
  'rnic-failure': (o) => SENDS.has(o.op),
};

export function opLength(o: ScenarioOp): number {
  if (o.op === 'read') return o.length;
  if ('data' in o && o.data) return o.data.length;
  if ('length' in o && typeof o.length === 'number') return o.length;
  return o.op.startsWith('immediate') ? 8 : 0;
}

export const ScenarioSchema = z
  .object({
    name: z.string().optional(),
    description: z.string().optional(),
    seed: uint(32).default(1),
    /** Datapath width of the cost model, octets per cycle. */
    width: z.union([z.literal(4), z.literal(8), z.literal(16), z.literal(32), z.literal(64)]).default(8),
    /** Post every op before running the link (several outstanding Reads, ORD/IRD limits); else one at a time. */
    pipeline: z.boolean().default(false),
    connection: ConnectionSchema.prefault({}),
    options: z
      .object({ mpa: MpaOptionsSchema.prefault({}), rdmap: RdmapOptionsSchema.prefault({}) })
      .strict()
      .prefault({}),
    regions: z.array(RegionSchema).default([]),
    receives: z.array(ReceiveSchema).default([]),
    ops: z.array(OpSchema).default([]),
    faults: z.array(FaultSchema).default([]),
  })
  .strict()
  .superRefine((s, ctx) => {
    const seen = new Map<string, number>();
    s.regions.forEach((r, i) => {
      const key = `${r.at}:${stagIndex(r.stag)}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['regions', i, 'stag'], message: `STag index already used by regions[${seen.get(key)}] at the ${r.at}` });
      seen.set(key, i);
    });
    if (!s.options.rdmap.rfc7306) {
      s.ops.forEach((o, i) => {
        if (RFC7306_OPS.has(o.op)) {
          ctx.addIssue({
            code: 'custom',
            path: ['ops', i, 'op'],
            message: `'${o.op}' is an RFC 7306 operation, and options.rdmap.rfc7306 is false: an RNIC without RFC 7306 has no Immediate Data or Atomic work requests`,
          });
        }
      });
    }
    const noRtr = s.connection.rtr === null || s.connection.revision === 1 || s.connection.initiator.revision === 1;
    const firstSender = s.ops.find((o) => SENDS.has(o.op) || o.op === 'abort');
    if (noRtr && firstSender?.from === 'responder') {
      ctx.addIssue({
        code: 'custom',
        path: ['ops', s.ops.indexOf(firstSender), 'from'],
        message: 'without an RTR the initiator must send first: the responder sends nothing before the first FPDU arrives (MPA fencing, RFC 6581 §3)',
      });
    }
    s.faults.forEach((f, i) => {
      if (!('op' in f)) return;
      const op = s.ops[f.op];
      if (!op) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'op'], message: `there is no op ${f.op} (${s.ops.length} ops)` });
        return;
      }
      if (!APPLIES[f.kind](op)) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'kind'], message: `${f.kind} does not apply to op ${f.op} (${op.op}); it applies to: ${OP_FAULTS[f.kind]}` });
      }
      const peer = op.from === 'initiator' ? s.connection.responder : s.connection.initiator;
      if (f.kind === 'bad-marker' && !peer.markers) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'kind'], message: `bad-marker needs markers from the ${op.from}: set connection.${op.from === 'initiator' ? 'responder' : 'initiator'}.markers` });
      }
      if (f.kind === 'corrupt-crc' && !s.connection.initiator.crc && !s.connection.responder.crc) {
        ctx.addIssue({ code: 'custom', path: ['faults', i, 'kind'], message: 'corrupt-crc needs CRC on (connection.initiator.crc or connection.responder.crc)' });
      }
    });
  });

export type Scenario = z.infer<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;

/** Parses a scenario; throws a ZodError whose issues name the offending fields. */
export function parseScenario(input: unknown): Scenario {
  return ScenarioSchema.parse(input);
}

/** The JSON Schema of a scenario file (what an editor or another tool validates against). */
export function scenarioJsonSchema(): object {
  return z.toJSONSchema(ScenarioSchema, { io: 'input', unrepresentable: 'any' });
}
