import { RX_EVENT } from '../../hdl-gen/blocks/ddp-rx-ctl';
import { RX_EVENT_FIELDS } from '../../hdl-gen/blocks/records';
import type { RnicEvent } from '../../ts-model/rnic/events';
import { formatErrorCode } from '../../ts-model/terminate-codes';
import type { Sampled, SampledOf } from '../cocotb/record-group';

/**
 * The receive path's events as the RTL gives them (ddp_rx m_evt_*, rnic_top's completion queue
 * m_cq_*: one record per event) and as the model does, both as the same comparable text.
 */

/** The model's events of the local side, as comparable strings (transmit-side completions left out). */
export function modelEvent(e: RnicEvent): string | null {
  switch (e.type) {
    case 'completion':
      if (e.status !== 'success') return null;
      switch (e.kind) {
        case 'recv':
          return `recv length=${e.length} se=${e.solicited ? 1 : 0} inv=${e.invalidatedStag !== undefined ? `0x${e.invalidatedStag.toString(16)}` : '-'}`;
        case 'recv-immediate':
          return `recv-immediate se=${e.solicited ? 1 : 0} data=${e.immediate}`;
        case 'read':
          return `read length=${e.length}`;
        case 'atomic':
          return `atomic value=0x${e.value!.toString(16)}`;
        default:
          return null;
      }
    case 'terminate-sent':
      return `terminate-sent ${formatErrorCode(e)}`;
    case 'terminate-received':
      return `terminate-received ${formatErrorCode(e)}`;
    case 'closed':
      return 'closed';
    default:
      return null;
  }
}

/** An event record (RX_EVENT_FIELDS, hdl-gen/blocks/records.ts) as text. */
export function rtlEvent(sampled: Sampled): string {
  const f = sampled as SampledOf<typeof RX_EVENT_FIELDS>;
  const kind = f.kind as number;
  const code = f.err as { layer: number; etype: number; code: number };
  const data = f.data as bigint;
  switch (kind) {
    case RX_EVENT.RECV:
      return `recv length=${f.length} se=${f.solicited} inv=${f.invalidated ? `0x${f.stag!.toString(16)}` : '-'}`;
    case RX_EVENT.RECV_IMMEDIATE:
      return `recv-immediate se=${f.solicited} data=${data.toString(16).padStart(16, '0')}`;
    case RX_EVENT.READ:
      return `read length=${f.length}`;
    case RX_EVENT.ATOMIC:
      return `atomic value=0x${data.toString(16)}`;
    case RX_EVENT.TERMINATE_SENT:
      return `terminate-sent ${formatErrorCode(code)}`;
    case RX_EVENT.TERMINATE_RECEIVED:
      return `terminate-received ${formatErrorCode(code)}`;
    case RX_EVENT.CLOSED:
      return 'closed';
    default:
      return `unknown event kind ${kind}`;
  }
}
