/**
 * Fresh zero-filled byte buffers carved from large slabs, as Node's Buffer pool does: creating a
 * typed array with its own backing store costs microseconds, about as much as a CRC over 4 KiB,
 * and the model creates one per FPDU and per ULPDU. A slab is never reused, so every buffer is
 * zero and independent; the price is that a live buffer keeps its slab alive.
 */
const SLAB_SIZE = 256 * 1024;
/** Larger requests get their own backing store. */
const MAX_CARVED = 16 * 1024;

let slab = new Uint8Array(SLAB_SIZE);
let used = 0;

export function allocateBytes(n: number): Uint8Array {
  if (n > MAX_CARVED) return new Uint8Array(n);
  if (used + n > SLAB_SIZE) {
    slab = new Uint8Array(SLAB_SIZE);
    used = 0;
  }
  // A view built directly on the buffer: subarray() goes through the species constructor lookup.
  const out = new Uint8Array(slab.buffer, used, n);
  used += (n + 7) & ~7; // keep every buffer 8-aligned for the CRC's word loads
  return out;
}
