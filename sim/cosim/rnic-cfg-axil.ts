import { rnicRegisterMap, type RegMapConfig } from '../../hdl-gen/blocks/rnic-regmap';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { AXI_RESP, WORD_BYTES, registerAt, type Register, type RegisterMap } from '../../hdl-gen/lib/regmap';
import { MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import type { Prng } from '../../ts-model/util/prng';
import { AxilMaster } from '../cocotb/axil-master';
import { withStalls } from '../cocotb/pause';
import { camelCase, type Sampled } from '../cocotb/record-group';
import type { RecordSink } from '../cocotb/record-sink';
import { DutBench } from '../harness/dut-bench';
import type { DutSelection } from '../harness/open-dut';
import { dutSelection } from '../harness/open-dut';
import { qpConfigWrites, stagEntryWrites } from '../host/axil-config';
import { AxilHost } from '../host/axil-host';
import { CfgAxilModel, type ModelCommit } from './cfg-axil-model';
import { qpConfigFields, type QpConfig } from './qp-config';
import type { RtlRegion } from './rx-peer';
import { stagEntry } from './stag-cfg';

/**
 * Co-simulation of rnic_cfg_axil (hdl-gen/blocks/rnic-cfg-axil.ts) alone, under an AXI4-Lite master
 * with random pauses on all five channels and several requests outstanding, and random
 * back-pressure (with long stalls, as the top's init sweeps give) on the two ports it drives:
 *
 * 1. Register traffic: random writes (any register, unmapped addresses, read-only ones, commit
 *    values in and out of range, partial strobes, any low address bits) and reads. Every write
 *    response equals the model's (cfg-axil-model.ts, the same register map, applied in the order
 *    the writes were issued); every read returns a value the register had between the read's
 *    request and its response (exactly the model's when no write to it is in flight); every
 *    commit the model accepts comes out of its port exactly once, in order, with the staged
 *    fields, and nothing else does.
 * 2. Host programs: random QP contexts and STag entries written by the host helper
 *    (sim/host/axil-config.ts: the register-map encoder) come out of the ports equal to the
 *    configuration port's fields as the bench of rnic_top drives them directly (qpConfigFields,
 *    stagEntry): host value → encoder → RTL → port, nothing shared with the RTL's generator but
 *    the map.
 *
 * The master reports every AXI4-Lite rule the slave breaks (a response without a request, a
 * response withdrawn or changed before its ready); the port sinks report a valid withdrawn or a
 * record changed before its ready.
 */
export interface CfgAxilCosimOptions extends DutSelection {
  readonly seed: number;
  /** Random register operations (phase 1). */
  readonly ops: number;
  /** QP contexts and STag entries through the host helper (phase 2), each. */
  readonly programs: number;
  readonly config?: RegMapConfig;
}

export interface CfgAxilCosimResult {
  readonly seed: number;
  readonly module: string;
  readonly writes: number;
  readonly reads: number;
  /** Records out of each port. */
  readonly commits: Readonly<Record<string, number>>;
  /** Write / read responses by code. */
  readonly responses: Readonly<Record<string, number>>;
  /** Reads that met a write to the same register in flight (checked against a range of values). */
  readonly racingReads: number;
  /** Cycles a port held its record waiting for ready (back-pressure seen). */
  readonly heldCycles: number;
  readonly mismatches: number;
  readonly firstMismatch: string | null;
  readonly violations: readonly string[];
  readonly cycles: number;
}

const RESP_NAME: Record<number, string> = { [AXI_RESP.OKAY]: 'OKAY', [AXI_RESP.SLVERR]: 'SLVERR', [AXI_RESP.DECERR]: 'DECERR' };

/** A sampled port record as record-name → bigint (sampled fields are camelCase numbers or bigints). */
const recordOf = (s: Sampled, names: readonly string[]): Record<string, bigint> => Object.fromEntries(names.map((n) => [n, BigInt(s[camelCase(n)] as number | bigint)]));
const show = (rec: Readonly<Record<string, bigint>>): string => Object.entries(rec).map(([k, v]) => `${k}=0x${v.toString(16)}`).join(' ');

export function cosimCfgAxil(o: CfgAxilCosimOptions): CfgAxilCosimResult {
  const c = o.config ?? { width: DEFAULT_CONFIG.width, qps: DEFAULT_CONFIG.qps, stagDepth: DEFAULT_CONFIG.stagDepth };
  const map = rnicRegisterMap(c);
  const module = `rnic_cfg_axil_w${c.width}_q${c.qps}_d${c.stagDepth}`;
  const bench = new DutBench(...DutBench.opening(module, o.seed, dutSelection(o)));
  const r = bench.r;
  const m = bench.model;
  const master = bench.add(
    new AxilMaster(m, {
      awPause: bench.pause(() => r.pick([0, 0.2, 0.5])),
      wPause: bench.pause(() => r.pick([0, 0.3, 0.6])),
      arPause: bench.pause(() => r.pick([0, 0.3])),
      bPause: bench.pause(() => r.pick([0, 0.3, 0.7])),
      rPause: bench.pause(() => r.pick([0, 0.3, 0.7])),
      maxWrites: r.int(1, 4),
      maxReads: r.int(1, 4),
    }),
  );
  const violations: string[] = [];
  const violate = (s: string) => void (violations.length < 20 && violations.push(s));
  const mismatches: string[] = [];
  const miss = (s: string) => void mismatches.push(s);
  // The ports' ready: random pauses and, now and then, a long stall (the top's init sweeps).
  const sinkOf = (prefix: string): RecordSink => bench.recordSink(prefix, { pause: withStalls(bench.pause(0.3), bench.pause(0.01), 60), stable: violate });
  const sinks = new Map(map.ports.map((p) => [p.name, sinkOf(p.prefix)] as const));
  const fieldNames = new Map(map.ports.map((p) => [p.name, [...p.commit.fields.map((f) => f.name), ...p.layout.fields.map((f) => f.name)].filter((n, i, a) => a.indexOf(n) === i)] as const));
  let heldCycles = 0;
  const valids = map.ports.map((p) => ({ valid: m.handle(`${p.prefix}_valid`), ready: m.handle(`${p.prefix}_ready`) }));
  bench.add({ sample: () => valids.forEach((v) => void (m.peekPreNumber(v.valid) === 1 && m.peekPreNumber(v.ready) === 0 && heldCycles++)) });
  bench.reset();

  /** Records each port must send, in order, and how many it has. */
  const expected = new Map(map.ports.map((p) => [p.name, [] as { readonly fields: Readonly<Record<string, bigint>>; readonly why: string }[]] as const));
  const responses: Record<string, number> = {};
  const count = (k: string) => void (responses[k] = (responses[k] ?? 0) + 1);

  // ---- phase 1: random register traffic against the model -------------------------------------
  const model = new CfgAxilModel(map);
  /** Every write issued, in order, with the register it targets and the value it leaves there. */
  const log: { readonly offset: number | null; readonly after: bigint | null }[] = [];
  let answered = 0;
  let racingReads = 0;
  let writes = 0;
  let reads = 0;
  const unmapped = (): number => {
    for (;;) {
      const a = r.int(0, (1 << map.addrBits) / WORD_BYTES - 1) * WORD_BYTES;
      if (!registerAt(map, a)) return a;
    }
  };
  const commits = map.registers.filter((x) => x.role.kind === 'commit');
  const pickAddr = (): { addr: number; reg: Register | null } => {
    const roll = r.int(0, 99);
    const reg = roll < 10 ? null : roll < 25 ? r.pick(commits) : r.pick(map.registers);
    return { addr: (reg ? reg.offset : unmapped()) | r.int(0, 3), reg };
  };
  const commitValue = (reg: Register): number => {
    const p = map.ports.find((x) => x.commitRegister === reg)!;
    return r.bool(0.75) ? Number(BigInt(r.u32()) % p.limit) : r.bool() ? Number(p.limit) >>> 0 : r.u32();
  };
  const issueWrite = () => {
    const { addr, reg } = pickAddr();
    const data = reg?.role.kind === 'commit' ? commitValue(reg) : r.u32();
    const strb = r.bool(0.8) ? 0xf : r.int(0, 15);
    const res = model.write(addr, data, strb);
    const what = `write ${reg?.name ?? 'unmapped'} (0x${addr.toString(16)} <- 0x${(data >>> 0).toString(16)}, strb 0x${strb.toString(16)})`;
    log.push({ offset: res.register && res.register.access === 'RW' && res.resp === AXI_RESP.OKAY ? res.register.offset : null, after: res.register ? model.value(res.register) : null });
    if (res.commit) expected.get(res.commit.port)!.push({ fields: res.commit.fields, why: what });
    writes++;
    master.write({
      addr,
      data,
      strb,
      done: (resp) => {
        answered++;
        count(`write ${RESP_NAME[resp] ?? resp}`);
        if (resp !== res.resp) miss(`${what}: response ${resp}, the model's ${res.resp}`);
      },
    });
  };
  const issueRead = () => {
    const { addr, reg } = pickAddr();
    const from = answered;
    const now = model.read(addr);
    // The value once the writes answered by now are done; each write in flight may come before the read.
    const before = reg ? valueAfter(reg, from) : 0n;
    reads++;
    master.read({
      addr,
      done: (resp, data) => {
        count(`read ${RESP_NAME[resp] ?? resp}`);
        const what = `read ${reg?.name ?? 'unmapped'} (0x${addr.toString(16)})`;
        if (resp !== now.resp) return miss(`${what}: response ${resp}, the model's ${now.resp}`);
        if (reg?.role.kind === 'status') {
          const width = map.status!.layout.width;
          if (data >>> width !== 0) miss(`${what}: 0x${data.toString(16)} has bits above the ${width} status bits`);
          return;
        }
        const allowed = new Set([before]);
        for (let i = from; i < log.length; i++) if (reg && log[i]!.offset === reg.offset) allowed.add(log[i]!.after!);
        if (allowed.size > 1) racingReads++;
        if (!allowed.has(BigInt(data >>> 0))) miss(`${what}: 0x${(data >>> 0).toString(16)}, the model's ${[...allowed].map((v) => `0x${v.toString(16)}`).join(' or ')}`);
      },
    });
  };
  /** The register's value after the first `n` writes. */
  function valueAfter(reg: Register, n: number): bigint {
    if (reg.role.kind === 'constant') return reg.role.value;
    for (let i = n - 1; i >= 0; i--) if (log[i]!.offset === reg.offset) return log[i]!.after!;
    return 0n;
  }
  /** Steps until `done` (false after `max` cycles: a mismatch, the slave has stopped). */
  const wait = (done: () => boolean, max: number, what: string): boolean => {
    for (let i = 0; i < max; i++) {
      if (done()) return true;
      bench.cycle();
    }
    if (done()) return true;
    miss(`${what}: not within ${max} cycles (at cycle ${m.cycles})`);
    return false;
  };
  let alive = true;
  for (let i = 0; i < o.ops && alive; i++) {
    if (r.bool(0.6)) issueWrite();
    else issueRead();
    // Keep a few requests in flight, now and then let everything drain.
    const depth = r.bool(0.05) ? 0 : r.int(1, 6);
    alive = wait(() => master.counts.writes + master.counts.reads >= writes + reads - depth, 20_000, 'AXI4-Lite responses');
  }
  alive &&= wait(() => master.idle, 100_000, 'the last AXI4-Lite responses');

  // ---- phase 2: host programs (the register-map encoder) against the port fields --------------
  const host = new AxilHost(master);
  for (let i = 0; i < o.programs && alive; i++) {
    const qp = r.int(0, c.qps - 1);
    const cfg = randomQp(r);
    const { qp: _q, ...direct } = qpConfigFields(qp, cfg);
    expected.get('qp')!.push({ fields: { qp: BigInt(qp), ...snake(direct) }, why: `host program: QP ${qp}` });
    host.run(qpConfigWrites(map, qp, cfg));
    const g = randomRegion(r, c.stagDepth);
    expected.get('stag')!.push({ fields: snake(stagEntry(g)), why: `host program: STag 0x${g.stag.toString(16)}` });
    host.run(stagEntryWrites(map, g));
    // A commit beyond the capabilities: SLVERR, nothing sent.
    if (r.bool(0.2)) {
      const p = r.pick(map.ports);
      writes++;
      master.write({ addr: p.commitRegister.offset, data: Number(p.limit) >>> 0, done: (resp) => void (count(`write ${RESP_NAME[resp]}`), resp !== AXI_RESP.SLVERR && miss(`${p.commitRegister.name} <- ${p.limit}: response ${resp}, SLVERR expected`)) });
    }
    alive = wait(() => host.idle && master.idle, 100_000, 'the host programs');
  }
  for (const e of host.errors) miss(`host: ${e}`);
  // Every record out (the ports' valids low a while: the sinks' stalls are at most 60 cycles).
  let quiet = 0;
  if (alive) wait(() => (quiet = valids.every((v) => m.peekNumber(v.valid) === 0) ? quiet + 1 : 0) > 100, 100_000, 'the ports to send their last records');

  // ---- the records out of each port, in order -------------------------------------------------
  const out: Record<string, number> = {};
  for (const p of map.ports) {
    const got = sinks.get(p.name)!.records.map((s) => recordOf(s, fieldNames.get(p.name)!));
    const want = expected.get(p.name)!;
    out[p.name] = got.length;
    if (got.length !== want.length) miss(`${p.prefix}: ${got.length} records out, ${want.length} expected`);
    for (let i = 0; i < Math.min(got.length, want.length); i++) {
      const w = want[i]!.fields;
      const diff = Object.keys(w).filter((k) => got[i]![k] !== w[k]);
      if (diff.length) miss(`${p.prefix} record ${i} (${want[i]!.why}): ${show(got[i]!)}; expected ${show(w)} (differs in ${diff.join(', ')})`);
    }
  }
  violations.push(...master.violations);
  return {
    seed: o.seed,
    module,
    writes,
    reads,
    commits: out,
    responses,
    racingReads,
    heldCycles,
    mismatches: mismatches.length,
    firstMismatch: mismatches[0] ?? null,
    violations,
    cycles: m.cycles,
  };
}

/** camelCase port fields (numbers, bigints, booleans) as record-name → bigint. */
function snake(fields: Record<string, number | bigint | boolean>): Record<string, bigint> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`), typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v)]));
}

/** A QP context with every field drawn over its whole range. */
function randomQp(r: Prng): QpConfig {
  const dir = () => ({ s0: r.u32(), seq: r.u32(), markers: r.bool() });
  return {
    pd: r.int(0, 0xffff),
    ird: r.int(0, 0xffff),
    ord: r.int(0, 0xffff),
    msn: r.u32(),
    mulpdu: r.int(0, 0xffff),
    maxUlpdu: r.bool(0.5) ? MAX_ULPDU_LENGTH : r.int(0, 0xffff),
    bigEndian: r.bool(),
    rfc7306: r.bool(),
    crc: r.bool(),
    rx: dir(),
    tx: dir(),
    fence: r.bool(),
  };
}

/** An STag entry with every field drawn over its whole range (the table's contract does not matter here). */
function randomRegion(r: Prng, depth: number): RtlRegion & { enable: boolean } {
  const rights = ['local-read', 'local-write', 'remote-read', 'remote-write', 'remote-atomic'] as const;
  return {
    stag: ((r.int(0, depth - 1) << 8) | r.int(0, 255)) >>> 0,
    pd: r.int(0, 0xffff),
    base: r.u64(),
    length: r.u64(),
    access: rights.filter(() => r.bool()),
    va: r.bool(),
    invalidatable: r.bool(),
    enable: r.bool(0.8),
  };
}

/** The committed-entry fields a ModelCommit has, for reports. */
export const commitText = (c: ModelCommit): string => `${c.port}: ${show(c.fields)}`;
