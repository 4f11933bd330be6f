import { readFileSync, writeFileSync } from 'node:fs';
import { ZodError } from 'zod';
import { OPCODE_NAMES } from '../ts-model/rdmap/constants';
import type { RnicEvent } from '../ts-model/rnic/events';
import { DEFAULT_ISN, runScenario, type ScenarioResult } from '../ts-model/scenario/run';
import { parseScenario, scenarioJsonSchema, type Scenario } from '../ts-model/scenario/schema';
import { connectionPcap } from '../sim/pcap/scenario-pcap';

/** A user's mistake in the input: reported as a message, exit status 2. */
export class UsageError extends Error {}

/** Reads and validates a scenario file; errors name the file and the offending field. */
export function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read scenario ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`scenario ${path} is not valid JSON: ${(e as Error).message}`);
  }
  try {
    return parseScenario(json);
  } catch (e) {
    if (e instanceof ZodError) throw new UsageError(`scenario ${path} is invalid:\n${formatIssues(e)}`);
    throw e;
  }
}

export function formatIssues(e: ZodError): string {
  return e.issues.map((i) => `  ${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`).join('\n');
}

/** JSON with bigints as 0x… strings and octets as hex. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v));
}

export function runReport(r: ScenarioResult): object {
  const c = r.link.connection;
  return {
    scenario: r.scenario.name ?? null,
    seed: r.scenario.seed,
    connection: {
      status: c.status,
      crc: c.crc,
      markers: { initiatorToResponder: c.initiatorToResponder.markers, responderToInitiator: c.responderToInitiator.markers },
      s0: { initiatorToResponder: c.initiatorToResponder.s0, responderToInitiator: c.responderToInitiator.s0 },
      rtr: c.rtr,
      initiator: c.initiator,
      responder: c.responder,
    },
    summary: r.summary,
    memory: r.memory,
    events: r.events,
  };
}

export function formatRun(r: ScenarioResult): string {
  const c = r.link.connection;
  const lines = [
    `${r.scenario.name ?? 'scenario'} (seed ${r.scenario.seed}): MPA ${c.status}, CRC ${c.crc ? 'on' : 'off'}, markers i→r ${c.initiatorToResponder.markers ? 'on' : 'off'} r→i ${c.responderToInitiator.markers ? 'on' : 'off'}, RTR ${c.rtr ?? 'none'}, IRD/ORD initiator ${c.initiator.ird}/${c.initiator.ord} responder ${c.responder.ird}/${c.responder.ord}`,
    '',
  ];
  for (const e of r.events) lines.push(formatEvent(e));
  const s = r.summary;
  lines.push(
    '',
    `summary: ${s.ops} ops, ${s.fpdus} FPDUs (${s.wireOctets} octets), ${s.placements} placements (${s.placedOctets} octets), ${s.completions} completions (${s.flushed} flushed), ${s.terminates.length} Terminates, ${s.cycles} model cycles at ${r.scenario.width} B/cycle`,
  );
  for (const t of s.terminates) lines.push(`  Terminate  ${t}`);
  for (const t of s.closed) lines.push(`  closed     ${t}`);
  lines.push('memory:');
  for (const m of r.memory) lines.push(`  ${m.at.padEnd(9)} STag ${m.stag} base ${m.base} length ${m.length}${m.valid ? '' : ' (invalidated)'}  digest ${m.digest}`);
  return lines.join('\n');
}

const opName = (op: number) => OPCODE_NAMES[op] ?? `opcode 0x${op.toString(16)}`;
const opRef = (op: number | null) => (op === null ? '' : ` [op ${op}]`);

function formatEvent(e: RnicEvent): string {
  const side = e.side.padEnd(9);
  switch (e.type) {
    case 'fpdu-sent':
      return `${side} FPDU  seq 0x${e.seq.toString(16).padStart(8, '0')} ${opName(e.opcode)}, ULPDU ${e.ulpduLength}, wire ${e.wireLength}${e.markers ? `, ${e.markers} markers` : ''}${e.fault ? `, FAULT ${e.fault}` : ''}${opRef(e.op)}`;
    case 'placement':
      return `${side}   place ${e.length} octets at 0x${e.address.toString(16)}${e.stag === null ? ' (receive buffer)' : ` (STag 0x${e.stag.toString(16)})`}${opRef(e.op)}`;
    case 'completion': {
      const extra = [
        e.solicited ? 'solicited' : '',
        e.immediate ? `immediate ${e.immediate}` : '',
        e.invalidatedStag !== undefined ? `invalidated STag 0x${e.invalidatedStag.toString(16)}` : '',
        e.value !== undefined ? `original 0x${e.value.toString(16)}` : '',
        e.match !== undefined ? (e.match ? 'compare matched' : 'compare missed') : '',
      ].filter(Boolean);
      return `${side}   completion ${e.kind} ${e.status}, ${e.length} octets${extra.length ? `, ${extra.join(', ')}` : ''}${opRef(e.op)}`;
    }
    case 'terminate-sent':
    case 'terminate-received':
      return `${side} ${e.type === 'terminate-sent' ? 'TERMINATE sent' : 'TERMINATE received'} ${e.name} (0x${e.layer.toString(16)}/0x${e.etype.toString(16)}/0x${e.code.toString(16).padStart(2, '0')}): ${e.reason}${opRef(e.op)}`;
    case 'closed':
      return `${side} closed: ${e.reason}${e.error ? ` (${e.error.name})` : ''}`;
  }
}

export function writePcap(r: ScenarioResult, out: string): number {
  const c = r.scenario.connection;
  const pcap = connectionPcap({ initiator: c.initiator.isn ?? DEFAULT_ISN.initiator, responder: c.responder.isn ?? DEFAULT_ISN.responder }, r.segments);
  writeFileSync(out, pcap);
  return pcap.length;
}

export function schemaText(): string {
  return JSON.stringify(scenarioJsonSchema(), null, 2);
}

export { runScenario };
