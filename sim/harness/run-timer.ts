import type { SimModel } from '../verilator/model';

/** How long a run took: model cycles and wall time, from construction to `stop`. */
export interface RunTime {
  readonly cycles: number;
  readonly seconds: number;
  readonly simCyclesPerSecond: number;
}

export class RunTimer {
  private readonly t0 = performance.now();
  private readonly c0: number;

  constructor(private readonly model: SimModel) {
    this.c0 = model.cycles;
  }

  /** Cycles and seconds so far (read before the model is closed). */
  stop(): RunTime {
    const seconds = (performance.now() - this.t0) / 1000;
    const cycles = this.model.cycles - this.c0;
    return { cycles, seconds, simCyclesPerSecond: Math.round(cycles / Math.max(seconds, 1e-9)) };
  }
}
