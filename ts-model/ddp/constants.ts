/** DDP wire constants [RFC 5041 §4; spec/ddp-rdmap.md §1]. */

/** DDP control octet (D+0). */
export const DdpFlag = Object.freeze({ T: 0x80, L: 0x40, RSVD: 0x3c, DV: 0x03 });
/** DDP version 01b. */
export const DDP_VERSION = 1;

export const TAGGED_HEADER_SIZE = 14;
export const UNTAGGED_HEADER_SIZE = 18;

/** Untagged queue numbers [RFC 5040 §4.3; RFC 7306 §10.2]. */
export const Qn = Object.freeze({ SEND: 0, READ_REQUEST: 1, TERMINATE: 2, ATOMIC_RESPONSE: 3 });

/** Per-(stream, QN) MSN: the first message is 1, then +1 modulo 2^32 [RFC 5041 §5.1]. */
export const FIRST_MSN = 1;
