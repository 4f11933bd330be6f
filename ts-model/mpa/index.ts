/** MPA (RFC 5044 as updated by RFC 6581): framing, markers, deframing, connection set-up. */
export * from './constants';
export { MpaOptionsSchema, DEFAULT_MPA_OPTIONS, mpaOptions, type MpaOptions, type MpaOptionsInput } from './options';
export { padLength, fpduLength, encodeFpdu, decodeFpdu, type DecodedFpdu } from './fpdu';
export { mulpdu } from './mulpdu';
export { seqAdd, seqDiff } from './sequence';
export { markerPhase, type MpaStreamConfig, type ResolvedStream } from './stream';
export { hex32 } from '../util/hex';
export { MpaFramer, type FramedFpdu, type PlacedMarker } from './framer';
export { MpaDeframer, type DeframeEvent, type DeliveredFpdu, type MpaStreamError, type DiscardedFpdu } from './deframer';
export { encodeMpaFrame, parseMpaFrame, mpaFrameLength, type MpaFrame, type MpaFrameKind, type EnhancedData, type ParseResult } from './frames';
export {
  MpaEndpointSchema,
  MpaResponderSchema,
  RESPONDER_RTR_REQUIRED,
  RtrTypeSchema,
  acceptsNoRtr,
  mpaEndpoint,
  mpaResponder,
  buildRequest,
  buildReply,
  acceptReply,
  setupError,
  type MpaEndpoint,
  type MpaEndpointInput,
  type RtrType,
  type SetupError,
  type ReplyDecision,
  type InitiatorOutcome,
} from './negotiation';
export { setUpConnection, type ConnectionSetup, type ConnectionResult, type SideState } from './connection';
export { corruptCrc, corruptMarker, corruptPayload } from './faults';
