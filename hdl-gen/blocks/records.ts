import { ATOMIC_REQUEST_HEADER_SIZE } from '../../ts-model/rdmap/constants';
import type { ErrorCode } from '../../ts-model/terminate-codes';
import { record } from '../lib/record';

/**
 * The records the RNIC blocks pass between them and to their harnesses, each defined once
 * (hdl-gen/lib/record.ts): blocks read and build them by field name, the Verilog names the
 * fields, testbenches encode and decode with the same objects.
 */

/** A Terminate's error code as the receive path carries it (spec/ddp-rdmap.md §9): 0 = no error. */
export const ERROR_WORD = record('error_word', {
  layer: { width: 2, doc: 'Terminate Layer: 0 RDMAP, 1 DDP, 2 LLP' },
  etype: { width: 4, doc: 'Error Type' },
  code: { width: 8, doc: 'Error Code' },
});

/** An error code as a value of ERROR_WORD. */
export const errBits = (e: ErrorCode): bigint => ERROR_WORD.encode({ layer: e.layer, etype: e.etype, code: e.code });

/** Octets of the RDMAP part after the untagged header a descriptor carries: the largest, the Atomic Request. */
export const DDP_RX_RDMAP_OCTETS = ATOMIC_REQUEST_HEADER_SIZE;

/**
 * One ULPDU as ddp_rx_hdr decoded it (its m_desc): the verdict of the header checks, the DDP header,
 * lengths, and the RDMAP part after the untagged header. Multi-octet wire fields are big-endian
 * numbers; `rdmap` holds octet D+18+j in bits [8j+7:8j], zero past the ULPDU.
 */
export const DDP_RX_DESC = record('ddp_rx_desc', {
  ok: { width: 1, doc: 'every header check passed' },
  has_payload: { width: 1, doc: 'ULP data follows on the data stream' },
  err: ERROR_WORD,
  ulpdu_len: { width: 16, doc: 'ULPDU_Length' },
  payload_len: { width: 16, doc: 'data octets after the DDP header (0 without has_payload)' },
  t: { width: 1, doc: 'DDP tagged flag' },
  l: { width: 1, doc: 'DDP last flag' },
  dv: { width: 2, doc: 'DDP version' },
  opcode: { width: 4, doc: 'RDMAP opcode' },
  rsvd_ulp: { width: 8, doc: 'D+1: the RDMAP control octet' },
  stag: { width: 32, doc: 'D+2..5: tagged STag; untagged RsvdULP[8:39] (the Invalidate STag)' },
  to: { width: 64, doc: 'D+6..13: tagged TO' },
  qn: { width: 32, doc: 'D+6..9: untagged QN' },
  msn: { width: 32, doc: 'D+10..13: untagged MSN' },
  mo: { width: 32, doc: 'D+14..17: untagged MO' },
  rdmap: { width: 8 * DDP_RX_RDMAP_OCTETS, doc: 'D+18 onwards: the RDMAP part' },
  ctrl0: { width: 8, doc: 'D+0 as received, reserved bits included (a Terminate copies it)' },
});

/** What mpa_tx takes with each ULPDU, on s_axis_tuser with its first beat: the rest is its QP's context. */
export const MPA_TX_ULPDU = record('mpa_tx_ulpdu', {
  ulpdu_length: { width: 16, doc: 'ULPDU octets that follow' },
});

/**
 * A QP's transmit framing configuration, loaded on mpa_tx's cfg port (cfg_<field>) with a new
 * connection: the QP's next FPDU starts at `seq`, every later one where the one before ended.
 */
export const MPA_TX_CFG = record('mpa_tx_cfg', {
  markers: { width: 1, doc: 'markers in this direction (the peer asked for them, spec/mpa.md section 4.2)' },
  crc: { width: 1, doc: 'CRC negotiated (off: the CRC field is sent as 0)' },
  s0: { width: 9, doc: 'low 9 bits of S0, where markers count from (spec/mpa.md section 4.3)' },
  seq: { width: 9, doc: "low 9 bits of the TCP sequence number of the connection's first FPDU; (seq - S0) mod 4 = 0" },
});

/** A posted receive buffer (RFC 5040 section 5.3: a Send is placed in the next one, in order). */
export const RECV_BUFFER = record('recv_buffer', {
  addr: { width: 64, doc: 'host address' },
  len: { width: 32, doc: 'octets' },
});

/**
 * A QP's receive-side configuration, loaded with a new connection (ddp_rx_ctl's cfg): what the
 * control checks with (PD, IRD, ORD, the first MSN of every queue) and what the responder needs
 * of the QP with each request (MULPDU, the atomic targets' byte order), and MPA fencing.
 */
const QP_RX_CFG_FIELDS = {
  pd: { width: 16, doc: "the stream's protection domain", ref: 'RFC 5041 §7.1, §8 (spec/ddp-rdmap.md §5.3 T2)' },
  ird: { width: 16, doc: 'inbound Read/Atomic Requests allowed in the IRRQ (IRD)', ref: 'RFC 5040 §6.1, RFC 6581 §9.1' },
  ord: { width: 16, doc: 'outbound Read/Atomic Requests allowed outstanding (ORD)', ref: 'RFC 5040 §6.1, RFC 6581 §9.1' },
  initial_msn: { width: 32, doc: 'first MSN of every queue (RFC 5041 section 5.1)', ref: 'RFC 5041 §5.1' },
  mulpdu: { width: 16, doc: 'largest ULPDU this side sends (>= 64): Read Response segments carry at most mulpdu - 14 octets', ref: 'RFC 5044 MULPDU (spec/mpa.md §5)' },
  big_endian: { width: 1, doc: 'atomic targets are big-endian in host memory', ref: 'RFC 7306 (spec/rdmap-extensions.md §4.3)' },
  fence: { width: 1, doc: "MPA fencing: send nothing before the peer's first FPDU has arrived (the responder, RFC 6581 section 3)", ref: 'RFC 6581 §3' },
} as const;
export const QP_RX_CFG = record('qp_rx_cfg', QP_RX_CFG_FIELDS);

/**
 * A QP's whole context as rnic_top's configuration port takes it (cfg_<field>, beside cfg_qp):
 * the receive-side configuration above, the transmit framing (mpa_tx's MPA_TX_CFG), what
 * ddp_rx_hdr needs with each ULPDU (RFC 7306 on or off) and mpa_rx's receive framing. The
 * AXI4-Lite register map (rnic-regmap.ts) stages the same fields, one register each.
 */
export const QP_CFG = record('qp_cfg', {
  ...QP_RX_CFG_FIELDS,
  tx_markers: { width: 1, doc: "MPA markers in what this QP sends (the peer's M bit)", ref: 'RFC 5044 markers (spec/mpa.md §4.2)' },
  crc: { width: 1, doc: 'MPA CRC, both directions (negotiated, RFC 5044 §7.1)', ref: 'RFC 5044 §7.1 (spec/mpa.md §3.4)' },
  tx_s0: { width: MPA_TX_CFG.field('s0').width, doc: "low 9 bits of this side's S0: where the sent markers count from", ref: 'RFC 5044 S0 (spec/mpa.md §4.3)' },
  tx_seq: { width: MPA_TX_CFG.field('seq').width, doc: 'low 9 bits of the sequence number of the first sent octet', ref: 'spec/mpa.md §4.5' },
  rfc7306: { width: 1, doc: 'accept RFC 7306 opcodes 0x8-0xB (Immediate Data, Atomics)', ref: 'RFC 7306 §5, §6' },
  rx_markers: { width: 1, doc: 'markers in what this QP receives (its own M bit, spec/mpa.md §4.2)', ref: 'RFC 5044 markers (spec/mpa.md §4.2)' },
  rx_s0: { width: MPA_TX_CFG.field('s0').width, doc: "low 9 bits of the peer's S0 (spec/mpa.md §4.3)", ref: 'RFC 5044 S0 (spec/mpa.md §4.3)' },
  rx_seq: { width: MPA_TX_CFG.field('seq').width, doc: 'low 9 bits of the sequence number of the first octet received; (seq - S0) mod 4 = 0', ref: 'spec/mpa.md §4.5' },
  max_ulpdu: { width: 16, doc: 'largest ULPDU_Length accepted (maxUlpduLength, spec/mpa.md §6 step 2)', ref: 'RFC 5044 (spec/mpa.md §6)' },
});

/** An ORQ entry: an outbound Read or Atomic Request waiting for its response (RFC 5040 section 6.1). */
export const ORQ_ENTRY = record('orq_entry', {
  stag: { width: 32, doc: 'Read: the Data Sink STag' },
  to: { width: 64, doc: 'Read: the Data Sink TO' },
  size: { width: 32, doc: 'Read: RDMA Read Message Size' },
  request_id: { width: 32, doc: 'Atomic: Request Identifier' },
  atomic: { width: 1, doc: 'an Atomic Request (else a Read Request)' },
});

/**
 * An IRRQ entry: an inbound Read or Atomic Request to answer. Two layouts of one width, told apart
 * by the `atomic` bit (a tagged union): no field serves two meanings.
 */
export const IRRQ_ATOMIC = record('irrq_atomic', {
  request_id: { width: 32, doc: 'Request Identifier' },
  addr: { width: 64, doc: 'translated, 8-octet aligned target' },
  add_swap: { width: 64, doc: 'Add Data / Swap Data' },
  add_swap_mask: { width: 64, doc: 'Add Mask / Swap Mask' },
  compare: { width: 64, doc: 'Compare Data' },
  compare_mask: { width: 64, doc: 'Compare Mask' },
  aopcode: { width: 4, doc: 'AOpCode' },
  atomic: { width: 1, doc: '1' },
});
export const IRRQ_READ = record('irrq_read', {
  sink_stag: { width: 32, doc: 'Data Sink STag' },
  src_addr: { width: 64, doc: 'translated source address (0 for a zero-length Read)' },
  sink_to: { width: 64, doc: 'Data Sink TO' },
  reserved0: { width: 64, doc: 'unused by a Read' },
  size: { width: 32, doc: 'RDMA Read Message Size' },
  reserved1: { width: IRRQ_ATOMIC.width - 32 - 64 - 64 - 64 - 32 - 1, doc: 'unused by a Read' },
  atomic: { width: 1, doc: '0' },
});
if (IRRQ_READ.width !== IRRQ_ATOMIC.width) throw new Error('internal: the IRRQ layouts differ in width');

/** A work request, as ddp_tx's wr_* ports take it (one field a port). */
export const WORK_REQUEST = record('work_request', {
  kind: { width: 3, doc: '0 Write, 1 Read, 2 Send, 3 Immediate, 4 Atomic' },
  solicited: { width: 1, doc: 'Send / Immediate: with Solicited Event' },
  invalidate: { width: 1, doc: 'Send: with Invalidate (of wr_stag)' },
  stag: { width: 32, doc: 'Write: Data Sink STag; Read: Data Source STag; Atomic: target STag; Send with Invalidate: the STag to invalidate' },
  to: { width: 64, doc: 'Write: Data Sink TO; Read: Data Source TO; Atomic: target TO' },
  addr: { width: 64, doc: 'Write / Send: translated host address of the data, any alignment' },
  len: { width: 32, doc: 'Write / Send: message size; Read: RDMA Read Message Size (0 allowed)' },
  sink_stag: { width: 32, doc: 'Read: the local Data Sink STag' },
  sink_to: { width: 64, doc: 'Read: the local Data Sink TO' },
  imm: { width: 64, doc: 'Immediate: the data, octet 0 in [63:56]' },
  aopcode: { width: 4, doc: 'Atomic: AOpCode' },
  add_swap: { width: 64, doc: 'Atomic: Add Data / Swap Data' },
  add_swap_mask: { width: 64, doc: 'Atomic: Add Mask / Swap Mask' },
  compare: { width: 64, doc: 'Atomic: Compare Data' },
  compare_mask: { width: 64, doc: 'Atomic: Compare Mask' },
  request_id: { width: 32, doc: 'Atomic: Request Identifier' },
});

/** The fields of a receive-path event after its kind (one list for both records below). */
const EVENT_DETAIL = {
  length: { width: 32, doc: 'octets' },
  solicited: { width: 1, doc: 'with Solicited Event' },
  invalidated: { width: 1, doc: 'recv: m_evt_stag was invalidated (Send with Invalidate)' },
  stag: { width: 32, doc: 'the invalidated STag' },
  data: { width: 64, doc: 'recv-immediate: the 8 octets, first in [63:56]; atomic: the original value' },
  err: ERROR_WORD,
} as const;

/** A receive-path event (ddp_rx's m_evt_*). */
export const RX_EVENT_FIELDS = record('rx_event', {
  kind: { width: 3, doc: '0 recv, 1 recv-immediate, 2 read, 3 atomic, 4 terminate-received, 5 terminate-sent, 6 closed' },
  ...EVENT_DETAIL,
});

/** A completion-queue entry of rnic_top (m_cq_*, beside m_cq_qp): a receive-path event, or one of the transmit side's. */
export const CQ_ENTRY = record('cq_entry', {
  kind: { width: 4, doc: '0..6 as rx_event; 7 sent (a work request has left), 8 first FPDU (a fenced QP may send, RFC 6581 section 3)' },
  ...EVENT_DETAIL,
});
