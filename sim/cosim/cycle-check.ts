/**
 * The RTL's cycles per FPDU next to the cost model's estimate (ts-model/cost): the relative error
 * distribution a co-simulation reports. Measured tlast to tlast, so only meaningful in a run
 * without back-pressure.
 */
export interface CycleCheck {
  readonly fpdus: number;
  /** FPDUs within ±5% of the model, and the largest relative error. */
  readonly within5Percent: number;
  readonly maxError: number;
  readonly meanError: number;
  /** Error buckets: [≤ −5%, (−5%, 0), 0, (0, 5%), ≥ 5%]. */
  readonly histogram: readonly number[];
}

export function cycleCheck(pairs: readonly { readonly measured: number; readonly model: number }[]): CycleCheck {
  const errors = pairs.map((p) => (p.measured - p.model) / p.model);
  return {
    fpdus: errors.length,
    within5Percent: errors.filter((e) => Math.abs(e) <= 0.05).length,
    maxError: errors.reduce((a, e) => (Math.abs(e) > Math.abs(a) ? e : a), 0),
    meanError: errors.reduce((a, e) => a + e, 0) / Math.max(1, errors.length),
    histogram: [
      errors.filter((e) => e <= -0.05).length,
      errors.filter((e) => e > -0.05 && e < 0).length,
      errors.filter((e) => e === 0).length,
      errors.filter((e) => e > 0 && e < 0.05).length,
      errors.filter((e) => e >= 0.05).length,
    ],
  };
}
