import type { AtomicRequestFields } from '../rdmap/headers';

/**
 * Work requests a ULP posts to an endpoint (the verbs of RFC 5040 §5 and RFC 7306 §5, §6). `id`
 * ties every event the request causes back to it (the scenario's op index).
 */
export type WorkRequest =
  | { readonly kind: 'write'; readonly id: number; readonly stag: number; readonly to: bigint; readonly data: Uint8Array }
  | {
      readonly kind: 'read';
      readonly id: number;
      /** Data Source: the remote buffer. */
      readonly stag: number;
      readonly to: bigint;
      readonly length: number;
      /** Data Sink: the local buffer (needs local-write). */
      readonly localStag: number;
      readonly localTo: bigint;
    }
  | {
      readonly kind: 'send';
      readonly id: number;
      readonly solicited: boolean;
      /** Send with Invalidate: the remote STag to invalidate. */
      readonly invalidate: number | null;
      readonly data: Uint8Array;
    }
  | { readonly kind: 'immediate'; readonly id: number; readonly solicited: boolean; readonly data: Uint8Array }
  | ({
      readonly kind: 'atomic';
      readonly id: number;
      /** Where the original value is stored locally, if anywhere. */
      readonly localStag: number | null;
      readonly localTo: bigint;
      // The requester picks the Request Identifier (RFC 7306 §5.2.1).
    } & Omit<AtomicRequestFields, 'requestId'>);

/** The RFC 6581 RTR indication the initiator sends first in peer-to-peer mode. */
export type RtrKind = 'write' | 'read' | 'send';

/**
 * Work requests that exist only with RFC 7306: Immediate Data (opcodes 0x8, 0x9, RFC 7306 §6)
 * and Atomics (0xA, RFC 7306 §5). An RNIC with the option rfc7306 off has none of them.
 */
export const needsRfc7306 = (wr: Pick<WorkRequest, 'kind'>): boolean => wr.kind === 'immediate' || wr.kind === 'atomic';
