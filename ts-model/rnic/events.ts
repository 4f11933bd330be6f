import type { StageCycles } from '../cost/cost-model';

export type Side = 'initiator' | 'responder';

export type CompletionKind = 'write' | 'read' | 'send' | 'immediate' | 'atomic' | 'recv' | 'recv-immediate' | 'rtr';

export type CompletionStatus = 'success' | 'flushed';

/** What an endpoint reports; the scenario runner, the pcap writer and the scoreboard consume these. */
export type RnicEvent =
  | {
      readonly type: 'fpdu-sent';
      readonly side: Side;
      readonly seq: number;
      readonly ulpduLength: number;
      readonly wireLength: number;
      readonly opcode: number;
      readonly op: number | null;
      readonly markers: number;
      readonly fault: string | null;
      readonly cycles: StageCycles;
    }
  | {
      readonly type: 'placement';
      readonly side: Side;
      readonly address: bigint;
      readonly length: number;
      readonly stag: number | null;
      readonly op: number | null;
    }
  | {
      readonly type: 'completion';
      readonly side: Side;
      readonly kind: CompletionKind;
      readonly op: number | null;
      readonly status: CompletionStatus;
      readonly length: number;
      readonly solicited?: boolean;
      readonly immediate?: string;
      readonly invalidatedStag?: number;
      /** Atomic: the original remote value. */
      readonly value?: bigint;
      /** Atomic CmpSwap: whether the compare matched (from the returned value). */
      readonly match?: boolean;
    }
  | {
      readonly type: 'terminate-sent' | 'terminate-received';
      readonly side: Side;
      readonly layer: number;
      readonly etype: number;
      readonly code: number;
      readonly name: string;
      readonly reason: string;
      /** The op whose message caused it (on the side that detected it), if known. */
      readonly op: number | null;
    }
  | {
      readonly type: 'closed';
      readonly side: Side;
      readonly reason: string;
      /** A local report with no Terminate on the wire (e.g. 0x2/0x0/0x01, 0x2/0x0/0x04). */
      readonly error?: { readonly layer: number; readonly etype: number; readonly code: number; readonly name: string };
    };
