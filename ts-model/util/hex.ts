/** Octets as lowercase hex, for messages and digests (a view of part of a buffer prints only that part). */
export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');

/** A 32-bit value as 0x-prefixed, 8-digit hex. */
export const hex32 = (v: number): string => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
