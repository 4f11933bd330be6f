import { WR_KIND } from '../../hdl-gen/blocks/ddp-tx';
import type { WORK_REQUEST } from '../../hdl-gen/blocks/records';
import { bytesToU64 } from '../../ts-model/rdmap/atomics';
import type { FieldsOf } from '../cocotb/record-group';
import type { LocalWr } from './rx-peer';

/**
 * The work-request port (wr_*, hdl-gen/blocks/ddp-tx.ts; rnic_top adds wr_qp): a work request as
 * the transmit path takes it, and its fields on the port. ddp_tx's harness, the top's functional
 * co-simulation and its rate measurement all drive it from here.
 */
export type TxRequest =
  | { readonly kind: 'write'; readonly stag: number; readonly to: bigint; readonly addr: bigint; readonly len: number }
  | { readonly kind: 'send'; readonly solicited: boolean; readonly invalidate: number | null; readonly addr: bigint; readonly len: number }
  | { readonly kind: 'read'; readonly stag: number; readonly to: bigint; readonly len: number; readonly sinkStag: number; readonly sinkTo: bigint }
  | { readonly kind: 'immediate'; readonly solicited: boolean; readonly imm: bigint }
  | {
      readonly kind: 'atomic';
      readonly aopcode: number;
      readonly stag: number;
      readonly to: bigint;
      readonly addSwap: bigint;
      readonly addSwapMask: bigint;
      readonly compare: bigint;
      readonly compareMask: bigint;
    };

/**
 * The fields a kind does not use, in the order the harnesses draw noise for them (the RTL must
 * ignore them; the seeds replay with this order).
 */
export const WR_NOISE_FIELDS = ['stag', 'to', 'addr', 'len', 'sinkStag', 'sinkTo', 'imm', 'addSwap', 'addSwapMask', 'compare', 'compareMask', 'requestId'] as const satisfies readonly (keyof WrFields)[];

/** The wr_* ports carry WORK_REQUEST (hdl-gen/blocks/records.ts), field for field. */
export type WrFields = FieldsOf<typeof WORK_REQUEST>;

/** The port's fields for `q`; an Atomic carries its Request Identifier (RFC 7306 §5.2.1). */
export function wrFields(q: TxRequest, requestId = 0): WrFields {
  switch (q.kind) {
    case 'write':
      return { kind: WR_KIND.WRITE, stag: q.stag >>> 0, to: q.to, addr: q.addr, len: q.len };
    case 'send':
      return { kind: WR_KIND.SEND, solicited: q.solicited, invalidate: q.invalidate !== null, ...(q.invalidate !== null && { stag: q.invalidate >>> 0 }), addr: q.addr, len: q.len };
    case 'read':
      return { kind: WR_KIND.READ, stag: q.stag >>> 0, to: q.to, len: q.len >>> 0, sinkStag: q.sinkStag >>> 0, sinkTo: q.sinkTo };
    case 'immediate':
      return { kind: WR_KIND.IMMEDIATE, solicited: q.solicited, imm: q.imm };
    case 'atomic':
      return {
        kind: WR_KIND.ATOMIC, aopcode: q.aopcode, stag: q.stag >>> 0, to: q.to,
        addSwap: q.addSwap, addSwapMask: q.addSwapMask, compare: q.compare, compareMask: q.compareMask, requestId: requestId >>> 0,
      };
  }
}

/** The model's work request of the local side (rx-peer.ts) as the port takes it. */
export function txRequestOf({ wr, addr }: LocalWr): TxRequest {
  switch (wr.kind) {
    case 'write':
      return { kind: 'write', stag: wr.stag, to: wr.to, addr, len: wr.data.length };
    case 'send':
      return { kind: 'send', solicited: wr.solicited, invalidate: wr.invalidate, addr, len: wr.data.length };
    case 'immediate':
      return { kind: 'immediate', solicited: wr.solicited, imm: bytesToU64(wr.data, 'big') };
    case 'read':
      return { kind: 'read', stag: wr.stag, to: wr.to, len: wr.length, sinkStag: wr.localStag ?? 0, sinkTo: wr.localTo };
    case 'atomic':
      return {
        kind: 'atomic', aopcode: wr.aopcode, stag: wr.stag, to: wr.to,
        addSwap: wr.addSwapData, addSwapMask: wr.addSwapMask, compare: wr.compareData, compareMask: wr.compareMask,
      };
  }
}
