import { Qn } from '../../ts-model/ddp/constants';
import { Opcode } from '../../ts-model/rdmap/constants';
import { ALL_ERROR_CODES, DdpError, LlpError, RdmapError, type ErrorCode } from '../../ts-model/terminate-codes';
import type { Expr } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import { enumConstants } from '../lib/ports';
import { ERROR_WORD, errBits } from './records';

/** Work request kinds (WORK_REQUEST.kind). */
export const WR_KIND = Object.freeze({ WRITE: 0, READ: 1, SEND: 2, IMMEDIATE: 3, ATOMIC: 4 });
/** Receive-path event kinds (RX_EVENT_FIELDS.kind). */
export const RX_EVENT = Object.freeze({ RECV: 0, RECV_IMMEDIATE: 1, READ: 2, ATOMIC: 3, TERMINATE_RECEIVED: 4, TERMINATE_SENT: 5, CLOSED: 6 });

/** `<LAYER>_<KEY>` for every error code of the model: the name its localparam takes. */
const ERROR_NAMES = new Map<ErrorCode, string>([
  ...Object.entries(RdmapError).map(([k, e]) => [e, `RDMAP_${k}`] as const),
  ...Object.entries(DdpError).map(([k, e]) => [e, `DDP_${k}`] as const),
  ...Object.entries(LlpError).map(([k, e]) => [e, `LLP_${k}`] as const),
]);
if (ERROR_NAMES.size !== ALL_ERROR_CODES.length) throw new Error('internal: an error code without a name');

/**
 * The RNIC's code points as named constants of a module, declared when first read (no unused
 * localparam): RDMAP opcodes `OP_*` (RFC 5040 §4.2, RFC 7306), untagged queue numbers `QN_*`
 * (RFC 5040 §4.3), work request kinds `WR_*`, event kinds `EVT_*`, and error words `ERR_*`
 * (`err(e)`, the ERROR_WORD value of a Terminate code). The Verilog compares opcodes and codes by
 * name, never by a bare literal.
 */
export function rnicNames(m: ModuleBuilder) {
  const errs = new Map<ErrorCode, Expr>();
  return {
    OP: enumConstants(m, 'OP', 4, Opcode, (k) => `RDMAP opcode ${k}`),
    QN: enumConstants(m, 'QN', 2, Qn, (k) => `untagged queue ${k}`),
    WR: enumConstants(m, 'WR', 3, WR_KIND, (k) => `work request kind ${k}`),
    EVT: enumConstants(m, 'EVT', 3, RX_EVENT, (k) => `event kind ${k}`),
    /** The ERROR_WORD of `e`, as the constant ERR_<LAYER>_<KEY>. */
    err(e: ErrorCode): Expr {
      let x = errs.get(e);
      if (!x) {
        x = m.constant(`ERR_${ERROR_NAMES.get(e)!}`, ERROR_WORD.width, errBits(e), `${e.name} {code, etype, layer}`);
        errs.set(e, x);
      }
      return x;
    },
  };
}
