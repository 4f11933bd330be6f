/** Widths (octets per beat) of the RNIC datapath blocks: at least 8, so an atomic's 8-octet target is one beat. */
export const RNIC_WIDTHS = [8, 16, 32, 64] as const;

/** A RangeError naming the block and the value unless `bytes` is one of RNIC_WIDTHS. */
export function checkRnicWidth(block: string, bytes: number): void {
  if (!(RNIC_WIDTHS as readonly number[]).includes(bytes)) throw new RangeError(`${block} datapath width must be ${RNIC_WIDTHS.slice(0, -1).join(', ')} or ${RNIC_WIDTHS.at(-1)} octets, got ${bytes}`);
}
