/**
 * The frames an AXI4-Stream sink is assembling, one per tid when its frames interleave (else one,
 * at key 0): shared by AxisSink (beat by beat in TypeScript) and NativeAxisSink (from the addon's
 * beat log), so both grow their buffers the same way.
 */

/** A frame being assembled: its octets so far. */
export interface Assembly {
  buf: Uint8Array;
  n: number;
}

/** Initial frame assembly buffer; it doubles when a frame outgrows it. */
const INITIAL_FRAME_OCTETS = 2048;

/** The frame of `key`, started if new, with room for `octets` more. */
export function assemblyWithRoom(assemblies: Map<number, Assembly>, key: number, octets: number): Assembly {
  let a = assemblies.get(key);
  if (!a) assemblies.set(key, (a = { buf: new Uint8Array(INITIAL_FRAME_OCTETS), n: 0 }));
  if (a.n + octets > a.buf.length) {
    const bigger = new Uint8Array(Math.max(a.buf.length * 2, a.n + octets));
    bigger.set(a.buf.subarray(0, a.n));
    a.buf = bigger;
  }
  return a;
}
