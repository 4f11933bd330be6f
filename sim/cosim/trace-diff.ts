import type { TraceRecord } from './trace';

/**
 * `rnic diff A B`: the first place two transaction traces (trace.ts) part. The records are split
 * into channels whose order is defined — per QP: FPDUs in; FPDUs out that answer (Read and Atomic
 * Responses, Terminates) and those that work requests send, which are two queues of the RNIC
 * (RFC 5040 §5.5) and so interleave freely; placements; completions; first-FPDU completions —
 * and each channel is compared record by record. Of the channels that differ, the first
 * divergence is the one earliest in the files. `cycle` is left out of the comparison unless asked
 * for (two RTL runs): the model has none, and a change of timing is not a change of behaviour.
 */

export interface Located {
  readonly line: number;
  readonly r: TraceRecord;
}

export interface Divergence {
  /** The channel, in words ("QP 17, FPDUs out (requests)"). */
  readonly channel: string;
  /** Index of the differing record within the channel. */
  readonly index: number;
  readonly a: Located | null;
  readonly b: Located | null;
  /** Fields that differ (all fields when one side has no record). */
  readonly fields: string[];
  /** The records before it in the channel, on side A, with B's cycles where B has them. */
  readonly context: { a: Located; b: Located | null }[];
}

export interface DiffResult {
  readonly records: { a: number; b: number };
  readonly channels: number;
  readonly first: Divergence | null;
  /** Channels that differ somewhere. */
  readonly differing: number;
}

export interface DiffOptions {
  /** Compare `cycle` too (two RTL runs; default false). */
  readonly cycles?: boolean;
  /** Records of context before the divergence (default 3). */
  readonly context?: number;
}

const RESPONSES = new Set(['RDMA Read Response', 'Atomic Response', 'Terminate']);

/** The channel of a record, or null for records not compared (meta). */
export function channelOf(r: TraceRecord): string | null {
  switch (r.t) {
    case 'fpdu':
      return r.dir === 'in' ? `QP ${r.qp}, FPDUs in` : `QP ${r.qp}, FPDUs out (${RESPONSES.has(String(r.op)) ? 'responses' : 'requests'})`;
    case 'placement':
      return `QP ${r.qp}, placements`;
    case 'completion':
      return `QP ${r.qp}, completions`;
    case 'first':
      return `QP ${r.qp}, first-FPDU completions`;
    default:
      return null;
  }
}

function channels(rs: readonly Located[]): Map<string, Located[]> {
  const m = new Map<string, Located[]>();
  for (const x of rs) {
    const c = channelOf(x.r);
    if (c === null) continue;
    let list = m.get(c);
    if (!list) m.set(c, (list = []));
    list.push(x);
  }
  return m;
}

function differingFields(a: TraceRecord, b: TraceRecord, cycles: boolean): string[] {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((k) => cycles || k !== 'cycle');
  return keys.filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k]));
}

export function diffTraces(a: readonly Located[], b: readonly Located[], opts: DiffOptions = {}): DiffResult {
  const cycles = opts.cycles ?? false;
  const ca = channels(a);
  const cb = channels(b);
  const names = [...new Set([...ca.keys(), ...cb.keys()])];
  let first: Divergence | null = null;
  let firstAt = Infinity;
  let differing = 0;
  for (const name of names) {
    const xa = ca.get(name) ?? [];
    const xb = cb.get(name) ?? [];
    let k = 0;
    let fields: string[] = [];
    for (; k < Math.max(xa.length, xb.length); k++) {
      const p = xa[k];
      const q = xb[k];
      fields = p && q ? differingFields(p.r, q.r, cycles) : Object.keys((p ?? q)!.r);
      if (fields.length) break;
    }
    if (k === Math.max(xa.length, xb.length)) continue;
    differing++;
    const at = Math.min(xa[k]?.line ?? Infinity, xb[k]?.line ?? Infinity);
    if (at >= firstAt) continue;
    firstAt = at;
    const n = opts.context ?? 3;
    const context = xa.slice(Math.max(0, k - n), k).map((p, i) => ({ a: p, b: xb[Math.max(0, k - n) + i] ?? null }));
    first = { channel: name, index: k, a: xa[k] ?? null, b: xb[k] ?? null, fields, context };
  }
  const count = (rs: readonly Located[]) => rs.filter((x) => channelOf(x.r) !== null).length;
  return { records: { a: count(a), b: count(b) }, channels: names.length, first, differing };
}

const show = (v: unknown): string => (v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v));
const compact = (r: TraceRecord): string => JSON.stringify(r);

/**
 * The divergence as a reader wants it: where (the files and lines), the two records field by
 * field under short labels (the traces' sides, e.g. model and rtl), what came before.
 */
export function formatDiff(d: DiffResult, names: { a: string; b: string }, labels: { a: string; b: string } = { a: 'A', b: 'B' }): string {
  const f = d.first;
  if (!f) return `no divergence: ${d.records.a} and ${d.records.b} records, ${d.channels} channels (QP × kind), every one equal`;
  const cycleOf = (x: Located | null) => (x && 'cycle' in x.r && x.r.cycle !== undefined ? x.r.cycle : null);
  const cycle = cycleOf(f.b) ?? cycleOf(f.a);
  const where = [f.a ? `${names.a}:${f.a.line}` : `${names.a}: none`, f.b ? `${names.b}:${f.b.line}` : `${names.b}: none`].join(', ');
  const lines = [`first divergence: ${f.channel}, record ${f.index}${cycle !== null ? ` at cycle ${cycle}` : ''} (${where})`];
  const x = (f.a?.r ?? {}) as Record<string, unknown>;
  const y = (f.b?.r ?? {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])];
  const wide = Math.max(6, ...keys.map((k) => show(x[k]).length));
  lines.push(`   ${'field'.padEnd(14)} ${labels.a.padEnd(wide)} | ${labels.b}`);
  for (const k of keys) lines.push(`${f.fields.includes(k) ? '*' : ' '}  ${k.padEnd(14)} ${show(x[k]).padEnd(wide)} | ${show(y[k])}`);
  if (f.context.length) {
    lines.push(`before it in ${f.channel}:`);
    for (const c of f.context) lines.push(`  ${labels.a}:${c.a.line}${cycleOf(c.b) !== null ? ` (${labels.b} cycle ${cycleOf(c.b)})` : ''} ${compact(c.a.r)}`);
  }
  if (d.differing > 1) lines.push(`${d.differing} of ${d.channels} channels differ; this is the earliest`);
  return lines.join('\n');
}
