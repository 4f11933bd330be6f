import type { TcpSegmentRecord } from '../../ts-model/link/iwarp-link';
import { TcpConversation, type TcpEndpoint } from './tcp-frames';

/** Where the two ends of a capture live: iWARP has no assigned port, so any pair will do. */
export const CAPTURE_HOSTS: Readonly<{ initiator: Omit<TcpEndpoint, 'isn'>; responder: Omit<TcpEndpoint, 'isn'> }> = Object.freeze({
  initiator: { mac: '02:00:00:00:00:01', ip: '10.0.0.1', port: 49152 },
  // Not a port another dissector claims first (5000 is GSM IPA, spec/mpa.md §9).
  responder: { mac: '02:00:00:00:00:02', ip: '10.0.0.2', port: 40000 },
});

/** The TCP connection of a capture, between CAPTURE_HOSTS, each side's SYN at its ISN. */
export function captureConversation(isn: { readonly initiator: number; readonly responder: number }): TcpConversation {
  return new TcpConversation({ ...CAPTURE_HOSTS.initiator, isn: isn.initiator }, { ...CAPTURE_HOSTS.responder, isn: isn.responder });
}

/**
 * A pcap of one connection as the model ran it: SYN/SYN-ACK/ACK with both ISNs, the MPA Request
 * and Reply, then one FPDU per TCP segment, exactly the octets that went on the wire (faults
 * included), and the FIN exchange unless the connection was lost.
 */
export function connectionPcap(isn: { initiator: number; responder: number }, segments: readonly TcpSegmentRecord[]): Uint8Array {
  const conv = captureConversation(isn);
  conv.handshake();
  let lost = false;
  for (const s of segments) {
    // A retransmission repeats sequence numbers already used.
    const seq = s.seq === conv.nextSeq(s.from) ? {} : { seq: s.seq };
    conv.send(s.from, s.payload, seq);
    lost ||= s.lost === true;
  }
  if (!lost) conv.close();
  return conv.pcap();
}
