import { z } from 'zod';
import { ETYPE_MPA, IRD_ORD_MASK, IRD_ORD_NO_NEGOTIATE, LAYER_LLP, MpaErrorCode, MpaRevision } from './constants';
import type { EnhancedData, MpaFrame } from './frames';

/**
 * MPA connection set-up decisions (RFC 6581 §9; spec/mpa.md §3.4, §4.2, §7, §8): what each side
 * puts in its frame, and what the pair of frames decides: CRC, markers per direction, IRD/ORD, the
 * RTR, rejection and the set-up errors.
 */

/** RFC 6581 RTR indication types: zero-length Send (B), RDMA Write (C), RDMA Read (D). */
export const RtrTypeSchema = z.enum(['send', 'write', 'read']);
export type RtrType = z.infer<typeof RtrTypeSchema>;

const irdOrd = z.number().int().min(0).max(IRD_ORD_MASK);

export const MpaEndpointSchema = z
  .object({
    /** Highest MPA revision spoken; 2 = RFC 6581 enhanced frames (S = 1). */
    revision: z.union([z.literal(MpaRevision.RFC5044), z.literal(MpaRevision.RFC6581)]).default(MpaRevision.RFC6581),
    /** M: this side wants markers in what it receives. */
    markers: z.boolean().default(false),
    /** C: this side wants CRC-32C (project default on, spec/mpa.md §3.4). */
    crc: z.boolean().default(true),
    /** Inbound RDMA Reads (and atomics) this side can take; 0x3FFF = do not negotiate. */
    ird: irdOrd.default(16),
    /** Outbound RDMA Reads this side wants outstanding; 0x3FFF = do not negotiate. */
    ord: irdOrd.default(16),
    /**
     * Initiator: the RTR types it can send, most preferred first; empty = client-server (A = 0).
     * Responder: the RTR types it accepts; at least one at Rev 2 (RFC 6581 §9.2, see mpaResponder).
     */
    rtr: z.array(RtrTypeSchema).default(['write', 'send', 'read']),
    /** Responder: the ULP accepts the connection (R = 0). */
    accept: z.boolean().default(true),
    /**
     * Responder: reject (R = 1, carrying the ORD it needs) when the initiator's IRD is below this
     * side's ORD, instead of lowering its ORD (spec/mpa.md §8.2).
     */
    rejectIfIrdBelowOrd: z.boolean().default(false),
    /** ULP Private Data (at most 508 octets in enhanced mode, 512 otherwise). */
    privateData: z.instanceof(Uint8Array).default(() => new Uint8Array(0)),
  })
  .strict();

export type MpaEndpoint = z.infer<typeof MpaEndpointSchema>;
export type MpaEndpointInput = z.input<typeof MpaEndpointSchema>;

export function mpaEndpoint(input: MpaEndpointInput = {}): MpaEndpoint {
  return MpaEndpointSchema.parse(input);
}

/**
 * RFC 6581 §9.2: "The responder MUST support at least one RTR indication option if it supports
 * Enhanced RDMA connection establishment", i.e. whenever it speaks Rev 2, whatever the initiator
 * asks for. A Rev 1 responder has no RTR options.
 */
export const RESPONDER_RTR_REQUIRED =
  'a responder that speaks Rev 2 (enhanced connection set-up) must accept at least one RTR type (RFC 6581 §9.2)';

/** True for a responder breaking that rule: Rev 2 and no RTR type accepted. */
export const acceptsNoRtr = (responder: Pick<MpaEndpoint, 'revision' | 'rtr'>): boolean =>
  responder.revision >= MpaRevision.RFC6581 && responder.rtr.length === 0;

/** An endpoint in the responder role: the endpoint fields plus the RFC 6581 §9.2 rule on `rtr`. */
export const MpaResponderSchema = MpaEndpointSchema.superRefine((e, ctx) => {
  if (acceptsNoRtr(e)) ctx.addIssue({ code: 'custom', path: ['rtr'], message: RESPONDER_RTR_REQUIRED });
});

export function mpaResponder(input: MpaEndpointInput = {}): MpaEndpoint {
  return MpaResponderSchema.parse(input);
}

/** A set-up failure, as the side that detects it reports it (Layer 0x2, EType 0x0). */
export interface SetupError {
  readonly layer: typeof LAYER_LLP;
  readonly etype: typeof ETYPE_MPA;
  readonly code: MpaErrorCode;
  readonly reason: string;
  /**
   * True when a Terminate carries the code as the initiator's first and last FPDU (0x05–0x07,
   * spec/mpa.md §8.4); false for 0x04, which only closes TCP and reports locally (§7.5).
   */
  readonly terminate: boolean;
}

export function setupError(code: MpaErrorCode, reason: string): SetupError {
  return { layer: LAYER_LLP, etype: ETYPE_MPA, code, reason, terminate: code >= MpaErrorCode.LOCAL_CATASTROPHIC };
}

const RTR_FLAG = { send: 'rtrSend', write: 'rtrWrite', read: 'rtrRead' } as const;
const RTR_ORDER: readonly RtrType[] = ['write', 'send', 'read'];

const offers = (e: EnhancedData, t: RtrType): boolean => e[RTR_FLAG[t]];

/** The Request an initiator sends: enhanced (S = 1, Rev 2) exactly when it speaks Rev 2. */
export function buildRequest(initiator: MpaEndpoint): MpaFrame {
  const enhanced = initiator.revision >= MpaRevision.RFC6581;
  const p2p = initiator.rtr.length > 0;
  return {
    kind: 'request',
    markers: initiator.markers,
    crc: initiator.crc,
    reject: false,
    revision: initiator.revision,
    enhanced: enhanced
      ? {
          peerToPeer: p2p,
          rtrSend: p2p && initiator.rtr.includes('send'),
          rtrWrite: p2p && initiator.rtr.includes('write'),
          rtrRead: p2p && initiator.rtr.includes('read'),
          ird: initiator.ird,
          ord: initiator.ord,
        }
      : null,
    privateData: initiator.privateData,
  };
}

export type ReplyDecision =
  | { readonly status: 'reply'; readonly reply: MpaFrame; readonly ird: number; readonly ord: number }
  | { readonly status: 'invalid'; readonly error: SetupError };

/** What a responder answers to a (well-formed) Request (RFC 6581 §9.1, §9.2, §10). */
export function buildReply(request: MpaFrame, responder: MpaEndpoint): ReplyDecision {
  if (acceptsNoRtr(responder)) throw new RangeError(RESPONDER_RTR_REQUIRED);
  // A responder without RFC 6581 treats S = 1 as a malformed frame and closes (RFC 6581 §10).
  if (request.enhanced && responder.revision < MpaRevision.RFC6581) {
    return { status: 'invalid', error: setupError(MpaErrorCode.INVALID_REQ_REP, 'enhanced Request (S = 1) to a Rev 1 responder') };
  }
  const base = {
    kind: 'reply' as const,
    markers: responder.markers,
    crc: responder.crc,
    // A Reply never carries a higher Rev than its Request (irdma practice).
    revision: Math.min(request.revision, responder.revision),
    privateData: responder.privateData,
  };
  const req = request.enhanced;
  if (!req) {
    // An unenhanced Request gets an unenhanced Reply; IRD/ORD are the ULP's business.
    return { status: 'reply', reply: { ...base, reject: !responder.accept, enhanced: null }, ird: responder.ird, ord: responder.ord };
  }
  let flags = { rtrSend: false, rtrWrite: false, rtrRead: false };
  if (req.peerToPeer) {
    const both = RTR_ORDER.filter((t) => offers(req, t) && responder.rtr.includes(t));
    // Set every offered type it accepts; if none, one it does accept (RFC 6581 §9.2).
    const chosen = both.length ? both : responder.rtr.slice(0, 1);
    flags = { rtrSend: chosen.includes('send'), rtrWrite: chosen.includes('write'), rtrRead: chosen.includes('read') };
  }
  // IRD: the responder's own, raised to 1 when it offers a zero-length Read RTR (RFC 6581 §9.1).
  let ird = responder.ird;
  if (flags.rtrRead && ird === 0) ird = 1;
  // ORD: at most the initiator's IRD (the MUST of RFC 6581 §9.1).
  let ord = responder.ord;
  let reject = !responder.accept;
  if (req.ird !== IRD_ORD_NO_NEGOTIATE && req.ird < ord) {
    if (responder.rejectIfIrdBelowOrd) reject = true; // the Reply carries the ORD it needs
    else ord = req.ird;
  }
  const enhanced: EnhancedData = {
    peerToPeer: req.peerToPeer,
    ...flags,
    ird: req.ord === IRD_ORD_NO_NEGOTIATE ? IRD_ORD_NO_NEGOTIATE : ird,
    ord: req.ird === IRD_ORD_NO_NEGOTIATE ? IRD_ORD_NO_NEGOTIATE : ord,
  };
  return { status: 'reply', reply: { ...base, reject, enhanced }, ird, ord };
}

export type InitiatorOutcome =
  | { readonly status: 'established'; readonly ird: number; readonly ord: number; readonly rtr: RtrType | null }
  | { readonly status: 'rejected'; readonly reason: string }
  | { readonly status: 'failed'; readonly error: SetupError };

/** What the initiator makes of the Reply to its Request (RFC 6581 §9.1–§9.3, §10). */
export function acceptReply(request: MpaFrame, reply: MpaFrame, initiator: MpaEndpoint): InitiatorOutcome {
  const fail = (code: MpaErrorCode, reason: string): InitiatorOutcome => ({ status: 'failed', error: setupError(code, reason) });
  if (reply.revision > request.revision) {
    return fail(MpaErrorCode.INVALID_REQ_REP, `Reply Rev ${reply.revision} is above the Request's Rev ${request.revision}`);
  }
  if (!!reply.enhanced !== !!request.enhanced) {
    // An enhanced Request is answered enhanced, an unenhanced one unenhanced (RFC 6581 §10).
    return fail(MpaErrorCode.INVALID_REQ_REP, `Reply S = ${reply.enhanced ? 1 : 0} to a Request with S = ${request.enhanced ? 1 : 0}`);
  }
  if (reply.reject) return { status: 'rejected', reason: 'the responder set R = 1' };
  const req = request.enhanced;
  const rep = reply.enhanced;
  if (!req || !rep) return { status: 'established', ird: initiator.ird, ord: initiator.ord, rtr: null };

  // 0x3FFF leaves the matching local value unchanged (RFC 6581 §9.1).
  const ord = rep.ird === IRD_ORD_NO_NEGOTIATE ? initiator.ord : Math.min(initiator.ord, rep.ird);
  if (rep.ord !== IRD_ORD_NO_NEGOTIATE && initiator.ird < rep.ord) {
    return fail(MpaErrorCode.INSUFFICIENT_IRD, `the responder's ORD ${rep.ord} exceeds this side's IRD ${initiator.ird}`);
  }
  const ird = initiator.ird;
  if (!req.peerToPeer) return { status: 'established', ird, ord, rtr: null };
  if (!rep.peerToPeer) {
    return fail(MpaErrorCode.NO_MATCHING_RTR, 'the Reply does not echo A = 1 (peer-to-peer)');
  }
  // Sole discretion among the types both flagged. A zero-length Read RTR needs responder IRD ≥ 1
  // (the responder raises it for exactly this, RFC 6581 §9.1), whatever the initiator's ORD.
  const both = initiator.rtr.filter((t) => offers(req, t) && offers(rep, t));
  const rtr = both.find((t) => t !== 'read' || rep.ird >= 1);
  if (!rtr) {
    return fail(
      MpaErrorCode.NO_MATCHING_RTR,
      both.length ? 'only a Read RTR is flagged by both sides and the responder IRD is 0' : 'no RTR type is flagged by both sides',
    );
  }
  return { status: 'established', ird, ord, rtr };
}
