import { acceptReply, encodeMpaFrame, mpaEndpoint, parseMpaFrame, setupError, type ConnectionResult } from '../mpa';
import { MpaErrorCode } from '../mpa/constants';
import type { ConnectionFaultKind } from './schema';

/**
 * Faults on MPA start-up (spec/mpa.md §7, §8): the octets or decisions are changed the way a
 * broken or hostile peer would, and the receiving side's own checks decide the outcome.
 */
export function tamperSetup(r: ConnectionResult, kinds: readonly ConnectionFaultKind[]): ConnectionResult {
  let out = r;
  for (const kind of kinds) {
    if (kind === 'bad-mpa-key') {
      const octets = out.request.octets.slice();
      octets[4]! ^= 0x20; // "MPA ID Req Frame" → "MPA\x00ID …"
      const parsed = parseMpaFrame(octets, 'request');
      if (parsed.status !== 'invalid') throw new Error('internal: a corrupted key still parses');
      out = failed(out, 'responder', setupError(parsed.code, parsed.reason), { request: { ...out.request, octets }, reply: null });
    } else if (kind === 'reply-ord-exceeds-ird' && out.reply?.frame.enhanced) {
      // The Reply asks the initiator for more inbound Reads than it offered.
      const enhanced = { ...out.reply.frame.enhanced, ord: Math.min(0x3ffe, out.initiator.ird + 1) };
      const frame = { ...out.reply.frame, enhanced };
      const reply = { ...out.reply, frame, octets: encodeMpaFrame(frame) };
      const outcome = acceptReply(out.request.frame, frame, mpaEndpoint({ ird: out.initiator.ird, ord: out.initiator.ord }));
      out = outcome.status === 'failed' ? failed(out, 'initiator', outcome.error, { reply }) : { ...out, reply };
    } else if (kind === 'setup-failure' && out.status === 'established') {
      out = failed(out, 'initiator', setupError(MpaErrorCode.LOCAL_CATASTROPHIC, 'local failure of the initiator after the Reply (injected)'), {});
    }
  }
  return out;
}

function failed(r: ConnectionResult, failedAt: 'initiator' | 'responder', error: ConnectionResult['error'] & object, patch: Partial<ConnectionResult>): ConnectionResult {
  return { ...r, ...patch, status: 'failed', failedAt, error, rtr: null };
}
