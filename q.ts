import { cosimMpaTx } from './sim/cosim/mpa-tx';
for (const w of [8, 64]) for (const L of [4096, undefined]) { const r = cosimMpaTx({ width: w, seed: 11, fpdus: 300, ...(L && { ulpduLength: L }), markers: true, crc: true, sourcePause: 0, sinkPause: 0 }); console.log(w, L ?? 'random', r.mismatches, JSON.stringify(r.cycleCheck)); }
