import { decodeDdpHeader, headerSize } from '../../ts-model/ddp/header';
import { OPCODE_NAMES } from '../../ts-model/rdmap/constants';
import { hex } from '../../ts-model/util/hex';

/**
 * ULPDUs decoded for a mismatch report: the DDP header (RFC 5041 §4) and the RDMAP opcode
 * (RFC 5040 §4.1, RFC 7306), then the payload length and its first octets.
 */
export function ulpduFields(u: Uint8Array): [string, string][] {
  const h = decodeDdpHeader(u);
  if (!h) return [['ULPDU', `${u.length} octets, shorter than a DDP header: ${hex(u)}`]];
  const rdmap = h.rsvdUlp;
  const op = rdmap & 0xf;
  const fields: [string, string][] = [
    ['opcode', `${OPCODE_NAMES[op] ?? 'undefined'} (0x${op.toString(16)}), RDMAP version ${rdmap >> 6}`],
    ['DDP', `${h.tagged ? 'tagged' : 'untagged'}, L=${h.last ? 1 : 0}, DV=${h.dv}`],
  ];
  if (h.tagged) fields.push(['STag', `0x${h.stag.toString(16).padStart(8, '0')}`], ['TO', `0x${h.to.toString(16)}`]);
  else fields.push(['QN', String(h.qn)], ['MSN', String(h.msn)], ['MO', String(h.mo)], ['RsvdULP2', `0x${h.rsvdUlp2.toString(16)}`]);
  const payload = u.subarray(headerSize(h.tagged));
  fields.push(['payload', `${payload.length} octets`], ['first octets', hex(payload.subarray(0, 24)) + (payload.length > 24 ? '…' : '')]);
  return fields;
}

export function describeUlpdu(u: Uint8Array): string {
  return ulpduFields(u)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

/** Model and RTL, one field per line, differing fields marked with `*`, and the first differing octet. */
export function sideBySide(model: Uint8Array, rtl: Uint8Array): string {
  const a = new Map(ulpduFields(model));
  const b = new Map(ulpduFields(rtl));
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  const wide = Math.max(5, ...keys.map((k) => (a.get(k) ?? '').length));
  const lines = [`   ${'field'.padEnd(14)} ${'model'.padEnd(wide)} | rtl`];
  for (const k of keys) {
    const x = a.get(k) ?? '-';
    const y = b.get(k) ?? '-';
    lines.push(`${x === y ? ' ' : '*'}  ${k.padEnd(14)} ${x.padEnd(wide)} | ${y}`);
  }
  let d = 0;
  while (d < model.length && d < rtl.length && model[d] === rtl[d]) d++;
  lines.push(`   first differing octet: ${d} of ${model.length} (model) / ${rtl.length} (rtl)`);
  lines.push(`   model @${d}: ${hex(model.subarray(d, d + 24))}`);
  lines.push(`   rtl   @${d}: ${hex(rtl.subarray(d, d + 24))}`);
  return lines.join('\n');
}
