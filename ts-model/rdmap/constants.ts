/** RDMAP wire constants [RFC 5040 §4; RFC 7306 §4; spec/ddp-rdmap.md §2, spec/rdmap-extensions.md §1]. */

/** RDMAP control octet (D+1): RV[7:6] | Rsv[5:4] | Opcode[3:0]. */
export const RDMAP_VERSION = 1;
export const RdmapCtrl = Object.freeze({ RV_SHIFT: 6, RV_MASK: 0xc0, RSV: 0x30, OPCODE: 0x0f });

export const Opcode = Object.freeze({
  WRITE: 0x0,
  READ_REQUEST: 0x1,
  READ_RESPONSE: 0x2,
  SEND: 0x3,
  SEND_INVALIDATE: 0x4,
  SEND_SE: 0x5,
  SEND_SE_INVALIDATE: 0x6,
  TERMINATE: 0x7,
  /** RFC 7306 §6. */
  IMMEDIATE: 0x8,
  IMMEDIATE_SE: 0x9,
  /** RFC 7306 §5. */
  ATOMIC_REQUEST: 0xa,
  ATOMIC_RESPONSE: 0xb,
});
export type Opcode = (typeof Opcode)[keyof typeof Opcode];

export const OPCODE_NAMES: Readonly<Record<number, string>> = Object.freeze({
  0x0: 'RDMA Write',
  0x1: 'RDMA Read Request',
  0x2: 'RDMA Read Response',
  0x3: 'Send',
  0x4: 'Send with Invalidate',
  0x5: 'Send with SE',
  0x6: 'Send with SE and Invalidate',
  0x7: 'Terminate',
  0x8: 'Immediate Data',
  0x9: 'Immediate Data with SE',
  0xa: 'Atomic Request',
  0xb: 'Atomic Response',
});

export const rdmapControl = (opcode: number, rv = RDMAP_VERSION): number => ((rv << RdmapCtrl.RV_SHIFT) & RdmapCtrl.RV_MASK) | (opcode & RdmapCtrl.OPCODE);
export const rdmapOpcode = (ctrl: number): number => ctrl & RdmapCtrl.OPCODE;
export const rdmapVersion = (ctrl: number): number => (ctrl & RdmapCtrl.RV_MASK) >>> RdmapCtrl.RV_SHIFT;

/** Tagged opcodes: Write and Read Response; every other opcode is untagged (check H5). */
export const isTaggedOpcode = (op: number): boolean => op === Opcode.WRITE || op === Opcode.READ_RESPONSE;
export const isSendOpcode = (op: number): boolean => op >= Opcode.SEND && op <= Opcode.SEND_SE_INVALIDATE;
export const isInvalidateOpcode = (op: number): boolean => op === Opcode.SEND_INVALIDATE || op === Opcode.SEND_SE_INVALIDATE;
export const isSolicitedOpcode = (op: number): boolean => op === Opcode.SEND_SE || op === Opcode.SEND_SE_INVALIDATE || op === Opcode.IMMEDIATE_SE;
export const isExtensionOpcode = (op: number): boolean => op >= Opcode.IMMEDIATE && op <= Opcode.ATOMIC_RESPONSE;

/** Read Request header after the untagged DDP header [RFC 5040 §4.4]: 28 octets. */
export const READ_REQUEST_HEADER_SIZE = 28;
/** Terminate header: Layer|EType, Code, control (M D R), reserved [RFC 5040 §4.8]. */
export const TERMINATE_HEADER_SIZE = 4;
export const TermCtrl = Object.freeze({ M: 0x80, D: 0x40, R: 0x20 });
/** DDP Segment Length field, present when D = 1. */
export const TERM_SEGMENT_LENGTH_SIZE = 2;
/** RFC 7306 §4: Atomic Request 52, Atomic Response 12, Immediate Data 8 octets. */
export const ATOMIC_REQUEST_HEADER_SIZE = 52;
export const ATOMIC_RESPONSE_HEADER_SIZE = 12;
export const IMMEDIATE_DATA_SIZE = 8;
