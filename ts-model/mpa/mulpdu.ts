import { CRC_SIZE, FPDU_ALIGN, MARKER_PERIOD, MARKER_SIZE, ULPDU_LENGTH_SIZE } from './constants';
import type { MpaOptions } from './options';
import { DEFAULT_MPA_OPTIONS } from './options';

/**
 * MULPDU, the largest ULPDU MPA accepts from DDP for a given EMSS (spec/mpa.md §5):
 *
 *   MULPDU = EMSS − (6 + 4·⌈EMSS/512⌉ + (EMSS mod 4))
 *
 * 6 = ULPDU_Length + CRC; the marker term is the worst case of markers in an EMSS window; the
 * last term is alignment slack. With markers off, `mulpduMode: 'noMarkerTerm'` drops the marker
 * term (spec/README.md #3); the default keeps the formula as it is.
 */
export function mulpdu(emss: number, markers: boolean, options: Pick<MpaOptions, 'mulpduMode'> = DEFAULT_MPA_OPTIONS): number {
  if (!Number.isInteger(emss) || emss < 1) throw new RangeError(`EMSS must be a positive integer, got ${emss}`);
  const markerTerm = markers || options.mulpduMode === 'rfc' ? MARKER_SIZE * Math.ceil(emss / MARKER_PERIOD) : 0;
  const value = emss - (ULPDU_LENGTH_SIZE + CRC_SIZE + markerTerm + (emss % FPDU_ALIGN));
  if (value < 0) throw new RangeError(`EMSS ${emss} is too small to carry an FPDU`);
  return value;
}
