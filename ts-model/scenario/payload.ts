import type { ScenarioOp } from './schema';

/**
 * Payload octets of an op: its hex `data` if given, else a deterministic function of the
 * scenario seed and the op index (splitmix32), so a scenario replays to the same octets.
 */
export function opPayload(seed: number, index: number, op: ScenarioOp): Uint8Array {
  if ('data' in op && op.data) return op.data;
  const length = 'length' in op && typeof op.length === 'number' ? op.length : op.op.startsWith('immediate') ? 8 : 0;
  const out = new Uint8Array(length);
  let s = (seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  for (let i = 0; i < length; i += 4) {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z = (z ^ (z >>> 16)) >>> 0;
    for (let k = 0; k < 4 && i + k < length; k++) out[i + k] = (z >>> (8 * k)) & 0xff;
  }
  return out;
}
