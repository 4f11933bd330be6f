import { cosimMpaRx } from './sim/cosim/mpa-rx';
for (const w of [8, 64]) for (const sizes of ['large', 'mixed'] as const) { const r = cosimMpaRx({ width: w, seed: 3, fpdus: 400, sourcePause: 0, sinkPause: 0, sizes, segments: 'fpdu' }); console.log(w, sizes, r.mismatches, JSON.stringify(r.cycleCheck)); }
