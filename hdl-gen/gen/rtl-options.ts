import type { MpaOptions } from '../../ts-model/mpa/options';
import type { RdmapOptions } from '../../ts-model/rnic/options';

/**
 * The interpretation points of spec/README.md (the model's MpaOptions and RdmapOptions) as the RTL
 * implements them: an option is either a per-QP configuration field (any value the schema allows
 * reaches the RTL through the configuration port) or fixed in the RTL at one value. A scenario or
 * a co-simulation that asks for another value is refused by name, never run into mismatches.
 */
type Support<T> = { readonly config: string } | { readonly fixed: T };

export const RTL_MPA_OPTIONS: { readonly [K in keyof MpaOptions]: Support<MpaOptions[K]> } = {
  leadMarkerInCrc: { fixed: true },
  fpduptrRef: { fixed: 'ulpduLength' },
  // MULPDU is the host's arithmetic: it loads the result into cfg_mulpdu.
  mulpduMode: { config: 'cfg_mulpdu' },
  checkMarkers: { fixed: true },
  silentDropOnCrcError: { fixed: false },
  maxUlpduLength: { config: 'cfg_max_ulpdu' },
};

export const RTL_RDMAP_OPTIONS: { readonly [K in keyof RdmapOptions]: Support<RdmapOptions[K]> | { readonly unused: string } } = {
  rfc7306: { config: 'cfg_rfc7306' },
  termSegLen: { fixed: 'segment' },
  atomicCredits: { fixed: 'shared' },
  maxAtomics: { unused: "only with atomicCredits 'separate'" },
  immDataPlacement: { fixed: 'cqe' },
  hostMemoryEndian: { config: 'cfg_big_endian' },
  draft00Swap: { fixed: false },
};

/** One message per option value the RTL does not implement, naming the option by its path. */
export function unsupportedOptions(options: { readonly mpa: MpaOptions; readonly rdmap: RdmapOptions }, path = 'options'): string[] {
  const out: string[] = [];
  const check = (group: 'mpa' | 'rdmap', table: Readonly<Record<string, object>>, values: Readonly<Record<string, unknown>>) => {
    for (const [name, support] of Object.entries(table)) {
      if (!('fixed' in support)) continue;
      const fixed = (support as { fixed: unknown }).fixed;
      if (values[name] !== fixed) out.push(`${path}.${group}.${name} ${JSON.stringify(values[name])}: the RTL implements ${JSON.stringify(fixed)} only`);
    }
  };
  check('mpa', RTL_MPA_OPTIONS, options.mpa);
  check('rdmap', RTL_RDMAP_OPTIONS, options.rdmap);
  return out;
}
