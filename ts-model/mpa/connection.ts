import { encodeMpaFrame, parseMpaFrame, type MpaFrame } from './frames';
import {
  acceptReply,
  buildReply,
  buildRequest,
  mpaEndpoint,
  mpaResponder,
  type MpaEndpointInput,
  type RtrType,
  type SetupError,
} from './negotiation';
import type { MpaOptions } from './options';
import { DEFAULT_MPA_OPTIONS } from './options';
import { checkSeq, seqAdd } from './sequence';
import type { MpaStreamConfig } from './stream';

/**
 * MPA start-up on one TCP connection (spec/mpa.md §7.4): the Request travels as the initiator's
 * first payload octets after its SYN, the Reply as the responder's, each side parses what it
 * receives from the octets, and full operation starts right after them (S0 per direction, §4.3).
 */
export interface ConnectionSetup {
  readonly initiator?: MpaEndpointInput;
  readonly responder?: MpaEndpointInput;
  /** Initial sequence numbers; the SYN takes one, so the Request is at ISN + 1. */
  readonly initiatorIsn: number;
  readonly responderIsn: number;
  readonly options?: MpaOptions;
}

export interface SideState {
  /** IRD/ORD in force on this side, and the raw values the peer sent (passed to the ULP). */
  readonly ird: number;
  readonly ord: number;
}

export interface ConnectionResult {
  readonly status: 'established' | 'rejected' | 'failed';
  /** The side that detected the failure, if any. */
  readonly failedAt?: 'initiator' | 'responder';
  readonly error?: SetupError;
  readonly request: { readonly seq: number; readonly octets: Uint8Array; readonly frame: MpaFrame };
  readonly reply: { readonly seq: number; readonly octets: Uint8Array; readonly frame: MpaFrame } | null;
  /** CRC is on in both directions if either frame has C = 1 (spec/mpa.md §3.4). */
  readonly crc: boolean;
  /** Initiator → responder; markers when Reply.M = 1 (spec/mpa.md §4.2). */
  readonly initiatorToResponder: MpaStreamConfig;
  /** Responder → initiator; markers when Request.M = 1. */
  readonly responderToInitiator: MpaStreamConfig;
  readonly initiator: SideState;
  readonly responder: SideState;
  readonly peerToPeer: boolean;
  /** The RTR the initiator sends first (peer-to-peer only), else null. */
  readonly rtr: RtrType | null;
}

export function setUpConnection(setup: ConnectionSetup): ConnectionResult {
  checkSeq('initiatorIsn', setup.initiatorIsn);
  checkSeq('responderIsn', setup.responderIsn);
  const initiator = mpaEndpoint(setup.initiator);
  const responder = mpaResponder(setup.responder);
  const options = setup.options ?? DEFAULT_MPA_OPTIONS;

  const requestFrame = buildRequest(initiator);
  const requestOctets = encodeMpaFrame(requestFrame);
  const requestSeq = seqAdd(setup.initiatorIsn, 1);
  const replySeq = seqAdd(setup.responderIsn, 1);
  const s0Forward = seqAdd(requestSeq, requestOctets.length);
  const request = { seq: requestSeq, octets: requestOctets, frame: requestFrame };

  const direction = (s0: number, markers: boolean, crc: boolean): MpaStreamConfig => ({ s0, markers, crc, options });
  /**
   * The framing the two frames negotiate: CRC if either frame has C = 1 (spec/mpa.md §3.4), each
   * direction marked iff its receiver set M (§4.2), S0 right after each frame (§4.3). A set-up
   * failure after the Reply uses it too: the initiator's first and last FPDU is a Terminate on
   * this stream (§8.4). Without a Reply (the responder refused the Request, 0x04) no FPDU ever
   * flows; the rules then read the Request's bits alone, as an absent Reply asks for neither CRC
   * nor markers.
   */
  const framing = (reply: ConnectionResult['reply']): Pick<ConnectionResult, 'crc' | 'initiatorToResponder' | 'responderToInitiator'> => {
    const crc = requestFrame.crc || !!reply?.frame.crc;
    const s0Backward = reply ? seqAdd(replySeq, reply.octets.length) : replySeq;
    return {
      crc,
      initiatorToResponder: direction(s0Forward, !!reply?.frame.markers, crc),
      responderToInitiator: direction(s0Backward, requestFrame.markers, crc),
    };
  };
  const noLink = (failedAt: 'initiator' | 'responder', error: SetupError, reply: ConnectionResult['reply']): ConnectionResult => ({
    status: 'failed',
    failedAt,
    error,
    request,
    reply,
    ...framing(reply),
    initiator: { ird: initiator.ird, ord: initiator.ord },
    responder: { ird: responder.ird, ord: responder.ord },
    peerToPeer: false,
    rtr: null,
  });

  // The responder parses the Request from the octets, as it arrives.
  const parsedRequest = parseMpaFrame(requestOctets, 'request');
  if (parsedRequest.status !== 'ok') throw new Error('internal: a Request built here does not parse');
  const decision = buildReply(parsedRequest.frame, responder);
  if (decision.status === 'invalid') return noLink('responder', decision.error, null);

  const replyOctets = encodeMpaFrame(decision.reply);
  const reply = { seq: replySeq, octets: replyOctets, frame: decision.reply };
  const parsedReply = parseMpaFrame(replyOctets, 'reply');
  if (parsedReply.status !== 'ok') throw new Error('internal: a Reply built here does not parse');
  const outcome = acceptReply(requestFrame, parsedReply.frame, initiator);
  if (outcome.status === 'failed') return noLink('initiator', outcome.error, reply);

  const established = outcome.status === 'established';
  return {
    status: established ? 'established' : 'rejected',
    request,
    reply,
    ...framing(reply),
    initiator: established ? { ird: outcome.ird, ord: outcome.ord } : { ird: initiator.ird, ord: initiator.ord },
    responder: { ird: decision.ird, ord: decision.ord },
    peerToPeer: !!requestFrame.enhanced?.peerToPeer,
    rtr: established ? outcome.rtr : null,
  };
}
