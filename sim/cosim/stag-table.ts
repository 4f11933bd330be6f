import { STAG_FAULTS, STAG_INV_FAULTS, STAG_RIGHT_BITS, STAG_TABLE_LATENCY, stagTableInitCycles } from '../../hdl-gen/blocks/stag-table';
import type { AccessRight } from '../../ts-model/memory/access';
import { StagTable, TO_SPACE, firstTaggedOffset, type Region, type RegionSpec } from '../../ts-model/memory/stag-table';
import { makeStag, stagIndex, stagKey } from '../../ts-model/memory/stag';
import { prng, type Prng } from '../../ts-model/util/prng';
import type { RecordGroup } from '../cocotb/record-group';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';

/**
 * Co-simulation of stag_table_d<depth> (hdl-gen/blocks/stag-table.ts) against the model's
 * StagTable (ts-model/memory/stag-table.ts).
 *
 * A seeded random schedule, one slot per clock cycle, each slot with up to one config write, one
 * lookup and one Send with Invalidate (plus idle slots and one reset in the middle of the run).
 * The model is run in the block's documented order (every operation sees every earlier cycle;
 * within a cycle: lookup, invalidate, then config write), so each expected response is computed
 * when its slot is generated. The config port is valid/ready: the schedule knows the block's
 * cfg_ready contract (0 through reset and the init sweep, stagTableInitCycles(depth) cycles from
 * the first cycle with rst low, and in the cycle two after an invalidate), offers a config write
 * and holds it, unchanged, until the slot where cfg_ready is 1; the model takes it in that slot.
 * cfg_ready itself is compared in every cycle. During the sweeps (after the first reset and the
 * one in the middle) the schedule is sparse, offers config writes that wait for the sweep's end,
 * and aims lookups and invalidates at the entries that were valid before the reset (still in the
 * block RAM until the sweep clears them): the model's empty table says invalid-stag.
 * Lookups can be aimed at the state they will meet: every fault
 * (unregistered index, index above the table, wrong key, invalidated, wrong PD, missing right,
 * TO wrap near 2^64, bounds at the first / last octet ± 1, zero-based and VA regions,
 * zero-length accesses), successful accesses, and random ones; invalidates of valid, invalid,
 * foreign-PD and non-invalidatable STags; re-registrations and invalidations of the index just
 * invalidated or looked up, in the same and the next cycle.
 *
 * The mirror: StagTable refuses to register an index twice (also an invalidated one), while the
 * hardware's config write replaces the entry. So the mirror keeps one StagTable per index: a
 * config write with cfg_enable = 1 puts a fresh StagTable holding just the new region there (the
 * old record, valid or invalidated, is gone, as in the hardware); cfg_enable = 0 removes it
 * (unregistered: invalid-stag, exactly what the model says for an invalidated region); reset
 * removes them all. Lookups and invalidates go to the index's table (an empty one if none), so
 * check() and invalidate() are the model's own code, unchanged.
 *
 * Every response is compared: rsp_valid / inv_rsp_valid in every cycle (a response exactly
 * STAG_TABLE_LATENCY cycles after each request, none otherwise), rsp_fault, rsp_address (the
 * model's address when ok, 0 on a fault) and inv_fault.
 */
export interface StagTableCosimOptions extends DutSelection {
  readonly depth: number;
  readonly seed: number;
  /** Operations (config writes + lookups + invalidates) to issue. */
  readonly operations: number;
}

export interface StagTableMismatch {
  /** Schedule slot (cycle after the first reset) of the request (cfg_ready: of the cycle compared). */
  readonly slot: number;
  /** The cycle the differing response came out (STAG_TABLE_LATENCY after the request; cfg_ready: the slot's own cycle). */
  readonly cycle: number;
  readonly what: 'lookup' | 'invalidate' | 'cfg_ready';
  readonly request: string;
  readonly expected: string;
  readonly actual: string;
}

export interface StagTableCosimResult {
  readonly dut: 'stag_table';
  readonly module: string;
  readonly depth: number;
  readonly seed: number;
  readonly latency: number;
  readonly mismatches: number;
  readonly lookups: number;
  readonly invalidates: number;
  readonly configs: number;
  /** Cycles a config write was offered while cfg_ready was 0 (held, as the requester must). */
  readonly configsHeld: number;
  /**
   * Responses by outcome (the model's): lookups as 'ok', 'invalid-stag', 'pd-mismatch', 'access',
   * 'to-wrap', 'bounds'; invalidates as 'inv:ok', 'inv:invalid-stag', 'inv:pd-mismatch',
   * 'inv:not-invalidatable'.
   */
  readonly faultsSeen: Record<string, number>;
  /** How often each crafted lookup / invalidate / ordering scenario was issued. */
  readonly scenarios: Record<string, number>;
  readonly cycles: number;
  readonly buildSeconds: number;
  readonly firstMismatch?: StagTableMismatch;
}

// ---- The schedule ------------------------------------------------------------------------------

interface Cfg {
  readonly index: number;
  readonly key: number;
  readonly pd: number;
  readonly base: bigint;
  readonly length: bigint;
  readonly access: number;
  readonly va: boolean;
  readonly invalidatable: boolean;
  readonly enable: boolean;
}

interface Lookup {
  readonly stag: number;
  readonly to: bigint;
  readonly len: number;
  readonly pd: number;
  readonly right: number;
  readonly scenario: string;
}

interface Inv {
  readonly stag: number;
  readonly pd: number;
  readonly scenario: string;
}

interface Slot {
  readonly rst?: boolean;
  /** The config write offered (cfg_valid 1) in this cycle; taken iff cfgReady. */
  readonly cfg?: Cfg;
  /** cfg_ready as the contract says for this cycle. */
  readonly cfgReady: boolean;
  readonly lk?: Lookup;
  readonly inv?: Inv;
  /** Expected responses (fault code; address for lookups). */
  lkExpect?: { fault: number; address: bigint };
  invExpect?: number;
}

const MAX64 = TO_SPACE - 1n;
const rightName = (bit: number): AccessRight => STAG_RIGHT_BITS[bit]!;

/** A bigint uniform-ish in [lo, hi] (inclusive), hi − lo < 2^64. */
function bigIn(r: Prng, lo: bigint, hi: bigint): bigint {
  if (hi <= lo) return lo;
  const span = hi - lo + 1n;
  return lo + (((r.u64() << 32n) | BigInt(r.u32())) % span);
}

class Mirror {
  readonly tables = new Map<number, StagTable>();
  private readonly empty = new StagTable();

  constructor(readonly depth: number) {}

  table(stag: number): StagTable {
    return this.tables.get(stagIndex(stag)) ?? this.empty;
  }

  region(index: number): Region | undefined {
    return this.tables.get(index)?.regions()[0];
  }

  check(l: Lookup): { fault: number; address: bigint } {
    const right = rightName(Math.log2(l.right));
    const c = this.table(l.stag).check(l.stag, l.to, l.len, l.pd, right);
    return c.ok ? { fault: 0, address: c.address } : { fault: STAG_FAULTS.indexOf(c.fault), address: 0n };
  }

  invalidate(i: Inv): number {
    const res = this.table(i.stag).invalidate(i.stag, i.pd);
    return res.ok ? 0 : STAG_INV_FAULTS.indexOf(res.fault);
  }

  config(c: Cfg): void {
    if (!c.enable) {
      this.tables.delete(c.index);
      return;
    }
    const t = new StagTable();
    const spec: RegionSpec = {
      stag: makeStag(c.index, c.key),
      pd: c.pd,
      base: c.base,
      length: c.length,
      access: STAG_RIGHT_BITS.filter((_, b) => (c.access >> b) & 1),
      addressing: c.va ? 'va' : 'zero-based',
      invalidatable: c.invalidatable,
    };
    t.register(spec);
    this.tables.set(c.index, t);
  }

  reset(): void {
    this.tables.clear();
  }
}

class Generator {
  readonly mirror: Mirror;
  readonly scenarios: Record<string, number> = {};
  /** A few indices most operations go to, so that they collide in the same and adjacent cycles. */
  private readonly hot: number[];
  private readonly pds = [0, 1, 2, 0xffff];
  /** Index of the last invalidate / lookup, for follow-ups in the next cycle. */
  private lastInv: number | null = null;
  private lastLk: number | null = null;
  private lastInvReq: Inv | null = null;
  /** The slot being generated (its cycle: slot 0 is the first cycle after the first reset). */
  private at = 0;
  /** The first slot cfg_ready may be 1 after the last reset: the init sweep ends before it. */
  private sweepEnd: number;
  /** Slots that hold a reset, and slots whose invalidate was taken. */
  private readonly rstAt = new Set<number>();
  private readonly invAt = new Set<number>();
  /** A config write offered and not taken yet: offered again, unchanged. */
  private pending: Cfg | null = null;
  /** Regions valid before the last reset: still in the RAM until the sweep clears them. */
  private stale: Region[] = [];
  configsHeld = 0;

  constructor(
    private readonly r: Prng,
    readonly depth: number,
  ) {
    this.mirror = new Mirror(depth);
    this.sweepEnd = stagTableInitCycles(depth);
    const n = Math.min(depth, 12);
    this.hot = Array.from({ length: n }, () => r.int(0, depth - 1));
  }

  private count(s: string): void {
    this.scenarios[s] = (this.scenarios[s] ?? 0) + 1;
  }

  private index(): number {
    return this.r.bool(0.8) ? this.r.pick(this.hot) : this.r.int(0, this.depth - 1);
  }

  private registered(valid: boolean | null): number | null {
    const ids = [...this.mirror.tables.keys()].filter((i) => valid === null || this.mirror.region(i)!.valid === valid);
    return ids.length ? this.r.pick(ids) : null;
  }

  cfg(sameAs: number | null): Cfg {
    const r = this.r;
    const index = sameAs ?? this.index();
    const old = this.mirror.region(index);
    const key = old && r.bool(0.3) ? stagKey(old.stag) : r.int(0, 255);
    let base: bigint;
    let length: bigint;
    switch (r.int(0, 5)) {
      case 0: // small anywhere
        length = BigInt(r.int(1, 256));
        base = bigIn(r, 0n, TO_SPACE - length);
        break;
      case 1: // ending exactly at 2^64 (wrap checks next to a valid region)
        length = BigInt(r.int(1, 1 << 20));
        base = TO_SPACE - length;
        break;
      case 2: // huge, from near 0
        base = BigInt(r.int(0, 4096));
        length = bigIn(r, 1n, MAX64 - base);
        break;
      case 3: // one octet
        length = 1n;
        base = bigIn(r, 0n, MAX64);
        break;
      case 4: // medium, 32-bit-ish lengths
        length = BigInt(r.int(1, 0x7fffffff)) * BigInt(r.int(1, 4));
        base = bigIn(r, 0n, TO_SPACE - length);
        break;
      default: // any
        base = r.u64();
        length = bigIn(r, 1n, TO_SPACE - base);
        if (length > MAX64) length = MAX64;
    }
    const access = r.bool(0.15) ? 31 : r.int(0, 31);
    return {
      index,
      key,
      pd: r.bool(0.85) ? r.pick(this.pds) : r.int(0, 0xffff),
      base,
      length,
      access,
      va: r.bool(0.5),
      invalidatable: r.bool(0.75),
      enable: r.bool(0.9),
    };
  }

  /** A lookup aimed at a scenario, against the current state. */
  lookup(follow: number | null): Lookup {
    const r = this.r;
    const kinds = ['random', 'unregistered', 'above', 'wrong-key', 'invalidated', 'wrong-pd', 'no-right', 'wrap', 'bounds-edge', 'zero-length', 'inside'] as const;
    if (follow !== null && !this.mirror.region(follow)) follow = null;
    let kind: (typeof kinds)[number] = follow !== null ? 'inside' : r.pick(kinds);
    const anyRight = () => 1 << r.int(0, 4);
    // A valid region to aim at, with a PD and a right that pass T2 / T3.
    let index = follow ?? (kind === 'invalidated' ? this.registered(false) : kind === 'unregistered' || kind === 'above' || kind === 'random' ? null : this.registered(true));
    if (kind === 'invalidated' && index === null) kind = 'random';
    if (index === null && kind !== 'unregistered' && kind !== 'above') kind = 'random';
    this.count(`lookup:${follow !== null ? 'follow-up' : kind}`);

    if (kind === 'random') {
      const idx = this.index();
      const reg = this.mirror.region(idx);
      const key = reg && r.bool(0.8) ? stagKey(reg.stag) : r.int(0, 255);
      const to = r.bool(0.5) && reg ? firstTaggedOffset(reg) + bigIn(r, 0n, reg.length) : r.u64();
      return { stag: makeStag(idx, key), to: to & MAX64, len: r.bool(0.5) ? r.int(0, 4096) : r.u32(), pd: reg && r.bool(0.8) ? reg.pd : r.pick(this.pds), right: anyRight(), scenario: kind };
    }
    if (kind === 'unregistered') {
      let idx = r.int(0, this.depth - 1);
      for (let k = 0; k < 8 && this.mirror.tables.has(idx); k++) idx = r.int(0, this.depth - 1);
      return { stag: makeStag(idx, r.int(0, 255)), to: r.u64(), len: r.int(0, 100), pd: r.pick(this.pds), right: anyRight(), scenario: kind };
    }
    if (kind === 'above') {
      const idx = r.bool(0.5) ? r.int(this.depth, Math.min(0xffffff, this.depth * 2)) : r.int(this.depth, 0xffffff);
      // A key and fields that would match a valid entry of the same low index bits.
      const alias = this.mirror.region(idx & (this.depth - 1));
      const key = alias ? stagKey(alias.stag) : r.int(0, 255);
      const to = alias ? firstTaggedOffset(alias) : 0n;
      return { stag: makeStag(idx, key), to, len: 1, pd: alias?.pd ?? 0, right: alias ? this.grantedRight(alias) : anyRight(), scenario: kind };
    }
    const reg = this.mirror.region(index!)!;
    const first = firstTaggedOffset(reg);
    const limit = first + reg.length;
    let stag = reg.stag;
    let pd = reg.pd;
    let right = this.grantedRight(reg);
    let to = first;
    let len = 1;
    switch (kind) {
      case 'wrong-key':
        stag = makeStag(index!, (stagKey(reg.stag) ^ r.int(1, 255)) & 0xff);
        break;
      case 'invalidated':
        break;
      case 'wrong-pd':
        pd = (reg.pd ^ r.int(1, 0xffff)) & 0xffff;
        break;
      case 'no-right': {
        const missing = STAG_RIGHT_BITS.map((_, b) => b).filter((b) => !reg.access.has(rightName(b)));
        right = missing.length ? 1 << r.pick(missing) : right;
        break;
      }
      case 'wrap': {
        // to + len just above / at / below 2^64.
        const a = BigInt(r.int(1, 1 << 20));
        to = TO_SPACE - a;
        const d = r.pick([1n, 1n, 0n, -1n, BigInt(r.int(2, 1000))]);
        len = Number(a + d > 0xffffffffn ? 0xffffffffn : a + d < 0n ? 0n : a + d);
        if (r.bool(0.2)) len = 0xffffffff;
        break;
      }
      case 'bounds-edge': {
        len = r.pick([0, 1, 2, r.int(1, 64), r.int(0, 1 << 16)]);
        const L = BigInt(len);
        const at = r.int(0, 5);
        // first − 1, first, last octet at the end (limit − len), one past it, and len = 0 at / past the end.
        to = [first - 1n, first, limit - L, limit - L + 1n, limit, limit + 1n][at]!;
        if (to < 0n) to = 0n;
        if (to > MAX64) to = MAX64;
        break;
      }
      case 'zero-length':
        len = 0;
        to = r.pick([first, limit, limit - 1n, first - 1n, bigIn(r, first, limit), r.u64()]);
        to = to < 0n ? 0n : to > MAX64 ? MAX64 : to;
        break;
      case 'inside': {
        const span = reg.length;
        len = Number(span >= 0xffffffffn ? BigInt(r.int(0, 1 << 20)) : bigIn(r, 0n, span));
        to = first + bigIn(r, 0n, span - BigInt(len));
        break;
      }
    }
    return { stag, to, len, pd, right, scenario: kind };
  }

  private grantedRight(reg: Region): number {
    const bits = STAG_RIGHT_BITS.map((_, b) => b).filter((b) => reg.access.has(rightName(b)));
    return 1 << (bits.length ? this.r.pick(bits) : this.r.int(0, 4));
  }

  inv(again: Inv | null): Inv {
    const r = this.r;
    if (again) {
      // The STag just invalidated (or not), once more in the next cycle.
      this.count('inv:again');
      return { ...again, scenario: 'again' };
    }
    const kind = r.pick(['valid', 'valid', 'valid', 'wrong-pd', 'wrong-key', 'invalid', 'unregistered', 'above'] as const);
    const index = kind === 'invalid' ? this.registered(false) : kind === 'unregistered' || kind === 'above' ? null : this.registered(true);
    this.count(`inv:${index === null && kind !== 'unregistered' && kind !== 'above' ? 'unregistered' : kind}`);
    if (kind === 'above') {
      // Key and PD of the valid entry with the same low index bits, if any: only the range fails.
      const idx = r.int(this.depth, r.bool(0.5) ? Math.min(0xffffff, this.depth * 2) : 0xffffff);
      const alias = this.mirror.region(idx & (this.depth - 1));
      return { stag: makeStag(idx, alias ? stagKey(alias.stag) : r.int(0, 255)), pd: alias?.pd ?? r.pick(this.pds), scenario: kind };
    }
    if (index === null) {
      return { stag: makeStag(r.int(0, this.depth - 1), r.int(0, 255)), pd: r.pick(this.pds), scenario: kind };
    }
    const reg = this.mirror.region(index)!;
    if (kind === 'wrong-pd') return { stag: reg.stag, pd: (reg.pd ^ r.int(1, 0xffff)) & 0xffff, scenario: kind };
    if (kind === 'wrong-key') return { stag: makeStag(index, (stagKey(reg.stag) ^ r.int(1, 255)) & 0xff), pd: reg.pd, scenario: kind };
    return { stag: reg.stag, pd: reg.pd, scenario: kind };
  }

  /** cfg_ready in slot k by the contract: a register, 0 after a reset's edge, through the sweep, and two cycles after an invalidate. */
  private ready(k: number): boolean {
    return !this.rstAt.has(k - 1) && k >= this.sweepEnd && !this.invAt.has(k - 2);
  }

  /**
   * Two slots without lookups and invalidates (their responses would fall in the reset: the
   * pipeline is cleared), then reset for `cycles` slots; the sweep starts in the slot after.
   */
  reset(cycles: number): Slot[] {
    const out: Slot[] = [this.slot(true), this.slot(true)];
    for (let i = 0; i < cycles; i++) {
      out.push({ rst: true, cfgReady: this.ready(this.at) });
      this.rstAt.add(this.at++);
    }
    this.stale = [...this.mirror.tables.keys()].map((i) => this.mirror.region(i)!).filter((g) => g.valid);
    this.mirror.reset();
    this.pending = null;
    this.lastInv = this.lastLk = null;
    this.lastInvReq = null;
    this.sweepEnd = this.at + stagTableInitCycles(this.depth);
    return out;
  }

  get sweeping(): boolean {
    return this.at < this.sweepEnd;
  }

  /** One cycle's operations, applied to the mirror in the block's order. */
  slot(quiet = false): Slot {
    const k = this.at++;
    const cfgReady = this.ready(k);
    const s = quiet ? (this.pending ? { cfg: this.pending } : {}) : this.sweeping ? this.sweepSlot(k) : this.busySlot(k);
    const slot: Slot = { ...s, cfgReady };
    if (slot.inv) this.invAt.add(k);
    if (slot.cfg) {
      this.pending = cfgReady ? null : slot.cfg;
      if (cfgReady) this.mirror.config(slot.cfg);
      else this.configsHeld++;
    }
    return slot;
  }

  /** A slot during the init sweep: mostly idle; lookups and invalidates of the entries valid before the reset; config writes offered. */
  private sweepSlot(k: number): Omit<Slot, 'cfgReady'> {
    const r = this.r;
    // The config write offered in the sweep's last slots is taken in the first slot after it.
    const nearEnd = this.sweepEnd - k <= 4;
    // About 400 active slots a sweep at most (a sweep is `depth` cycles): the run is for the checks after it.
    if (!nearEnd && !r.bool(Math.min(0.3, 400 / this.depth))) return this.pending ? { cfg: this.pending } : {};
    let lk: Lookup | undefined;
    let inv: Inv | undefined;
    const cfg = this.pending ?? (r.bool(nearEnd ? 0.7 : 0.3) ? this.cfg(null) : undefined);
    const aim = () => (this.stale.length && r.bool(0.7) ? r.pick(this.stale) : null);
    if (r.bool(0.8)) {
      const g = aim();
      if (g) {
        const first = firstTaggedOffset(g);
        lk = { stag: g.stag, to: first, len: 1, pd: g.pd, right: this.grantedRight(g), scenario: 'sweep' };
        this.count('lookup:sweep');
      } else lk = this.lookup(null);
    }
    if (r.bool(0.3)) {
      const g = aim();
      if (g) {
        inv = { stag: g.stag, pd: g.pd, scenario: 'sweep' };
        this.count('inv:sweep');
      } else inv = this.inv(null);
    }
    const s: Omit<Slot, 'cfgReady'> = { ...(cfg && { cfg }), ...(lk && { lk }), ...(inv && { inv }) };
    if (lk) s.lkExpect = this.mirror.check(lk);
    if (inv) s.invExpect = this.mirror.invalidate(inv);
    this.lastInvReq = null;
    this.lastInv = this.lastLk = null;
    return s;
  }

  private busySlot(k: number): Omit<Slot, 'cfgReady'> {
    const r = this.r;
    if (r.bool(0.05)) return this.pending ? { cfg: this.pending } : {};
    let lk: Lookup | undefined;
    let inv: Inv | undefined;
    let cfg: Cfg | undefined = this.pending ?? undefined;
    if (cfg && !this.ready(k)) this.count(this.invAt.has(k - 2) ? 'cfg:held-by-inv' : 'cfg:held');
    // Follow-ups of the last cycle's invalidate / lookup: the same index in this cycle.
    const followInv = this.lastInv !== null && r.bool(0.5);
    if (r.bool(0.8)) lk = this.lookup(followInv ? this.lastInv : null);
    if (r.bool(0.2) || (this.lastInvReq !== null && r.bool(0.3))) inv = this.inv(this.lastInvReq !== null && r.bool(0.5) ? this.lastInvReq : null);
    // Same-cycle collisions: a config write of the index looked up or invalidated in this cycle.
    if (!cfg && r.bool(0.3)) {
      const same = inv && r.bool(0.3) ? stagIndex(inv.stag) : lk && r.bool(0.2) ? stagIndex(lk.stag) : followInv && r.bool(0.4) ? this.lastInv : this.lastLk !== null && r.bool(0.1) ? this.lastLk : null;
      const inTable = same !== null && same < this.depth ? same : null;
      if (inTable !== null) this.count('cfg:collision');
      cfg = this.cfg(inTable);
    }
    const s: Omit<Slot, 'cfgReady'> = { ...(cfg && { cfg }), ...(lk && { lk }), ...(inv && { inv }) };
    if (lk) s.lkExpect = this.mirror.check(lk);
    if (inv) s.invExpect = this.mirror.invalidate(inv);
    // The config write, if taken (slot()), is applied after both: last in the cycle.
    this.lastInvReq = inv ?? null;
    this.lastInv = inv ? stagIndex(inv.stag) & (this.depth - 1) : null;
    this.lastLk = lk ? stagIndex(lk.stag) & (this.depth - 1) : null;
    if (this.lastInv !== null && stagIndex(inv!.stag) >= this.depth) this.lastInv = null;
    return s;
  }
}

/** The whole run: slots, with a reset (and idle slots around it) in the middle. */
function schedule(opts: StagTableCosimOptions): { slots: Slot[]; gen: Generator } {
  const r = prng(opts.seed);
  const gen = new Generator(r, opts.depth);
  const slots: Slot[] = [];
  let ops = 0;
  let resetDone = false;
  while (ops < opts.operations) {
    if (!resetDone && ops >= opts.operations / 2) {
      // Let the pipeline drain (two quiet slots), reset for two cycles; the init sweep follows.
      resetDone = true;
      slots.push(...gen.reset(2));
      continue;
    }
    const s = gen.slot();
    ops += (s.cfg && s.cfgReady ? 1 : 0) + (s.lk ? 1 : 0) + (s.inv ? 1 : 0);
    slots.push(s);
  }
  // Quiet slots for the last responses to come out in (a config write still held is offered on).
  for (let i = 0; i < STAG_TABLE_LATENCY; i++) slots.push(gen.slot(true));
  return { slots, gen };
}

const hexStr = (v: bigint) => `0x${v.toString(16)}`;
const describeLk = (l: Lookup) => `${l.scenario}: stag 0x${l.stag.toString(16)} to ${hexStr(l.to)} len ${l.len} pd ${l.pd} right ${rightName(Math.log2(l.right))}`;
const describeInv = (i: Inv) => `${i.scenario}: stag 0x${i.stag.toString(16)} pd ${i.pd}`;

// ---- The run -----------------------------------------------------------------------------------

/**
 * The fixture of stag_table_d<depth>: its three request ports (cfg_*, lk_*, inv_*; a request in a
 * cycle is its valid and fields) and rst, driven slot by slot; the responses are read by the run.
 */
class StagTableBench extends DutBench {
  readonly cfg: RecordGroup;
  readonly lk: RecordGroup;
  readonly inv: RecordGroup;

  constructor(opts: StagTableCosimOptions) {
    super(...DutBench.opening(`stag_table_d${opts.depth}`, opts.seed, dutSelection(opts)));
    this.cfg = this.inputs('cfg');
    this.lk = this.inputs('lk');
    this.inv = this.inputs('inv');
  }

  /** Drives one slot's requests (valid 0 where there is none). */
  drive(s: Slot): void {
    const p = (g: RecordGroup, valid: boolean) => this.model.pokeNumber(this.model.handle(`${g.prefix}_valid`), valid ? 1 : 0);
    this.model.pokeNumber(this.model.handle('rst'), s.rst ? 1 : 0);
    p(this.cfg, s.cfg !== undefined);
    if (s.cfg) this.cfg.poke({ ...s.cfg });
    p(this.lk, s.lk !== undefined);
    if (s.lk) this.lk.poke({ stag: s.lk.stag, to: s.lk.to, len: s.lk.len, pd: s.lk.pd, right: s.lk.right });
    p(this.inv, s.inv !== undefined);
    if (s.inv) this.inv.poke({ stag: s.inv.stag, pd: s.inv.pd });
  }
}

export function cosimStagTable(opts: StagTableCosimOptions): StagTableCosimResult {
  const tb = new StagTableBench(opts);
  const { model } = tb;
  const { slots, gen } = schedule(opts);
  const h = (name: string) => model.handle(name);
  const p = { cfgReady: h('cfg_ready'), rspValid: h('rsp_valid'), rspFault: h('rsp_fault'), rspAddress: h('rsp_address'), invRspValid: h('inv_rsp_valid'), invFault: h('inv_fault') };

  const faultsSeen: Record<string, number> = {};
  const mismatches = new Tally<StagTableMismatch>(1);
  let lookups = 0;
  let invalidates = 0;
  let configs = 0;
  const fail = (mm: Omit<StagTableMismatch, 'cycle'>) => mismatches.add({ ...mm, cycle: model.cycles });

  let slot = 0; // the slot driven in this cycle
  tb.add({
    drive: () => {
      const s: Slot = slots[slot]!;
      if (s.cfg && s.cfgReady) configs++;
      tb.drive(s);
    },
    sample: () => {
      // cfg_ready in this cycle, as the contract says (the schedule computed it).
      const now = slots[slot]!;
      const ready = model.peekPreNumber(p.cfgReady);
      if (ready !== (now.cfgReady ? 1 : 0)) {
        fail({ slot, what: 'cfg_ready', request: now.cfg ? `config of index ${now.cfg.index} offered` : 'none', expected: `cfg_ready ${now.cfgReady ? 1 : 0}`, actual: `cfg_ready ${ready}` });
      }
      // The pre-edge snapshot of this cycle holds the responses to the slot LATENCY cycles back.
      const k = slot - STAG_TABLE_LATENCY;
      slot++;
      const s: Slot | undefined = k >= 0 ? slots[k] : undefined;
      const lkValid = model.peekPreNumber(p.rspValid);
      if (s?.lk) {
        lookups++;
        const want = s.lkExpect!;
        const name = STAG_FAULTS[want.fault]!;
        faultsSeen[name] = (faultsSeen[name] ?? 0) + 1;
        const fault = model.peekPreNumber(p.rspFault);
        const address = model.peekPre(p.rspAddress);
        // The model's address of an empty access just past a region that ends at 2^64 is 2^64
        // itself; the 64-bit port carries it modulo 2^64 (0). Counted apart.
        if (want.address > MAX64) faultsSeen['ok:address-2^64'] = (faultsSeen['ok:address-2^64'] ?? 0) + 1;
        if (lkValid !== 1 || fault !== want.fault || address !== (want.address & MAX64)) {
          fail({
            slot: k,
            what: 'lookup',
            request: describeLk(s.lk),
            expected: `valid 1 ${name} address ${hexStr(want.address)}`,
            actual: `valid ${lkValid} ${STAG_FAULTS[fault] ?? fault} address ${hexStr(address)}`,
          });
        }
      } else if (lkValid !== 0) {
        fail({ slot: k, what: 'lookup', request: 'none', expected: 'rsp_valid 0', actual: 'rsp_valid 1' });
      }
      const invValid = model.peekPreNumber(p.invRspValid);
      if (s?.inv) {
        invalidates++;
        const want = s.invExpect!;
        const name = `inv:${STAG_INV_FAULTS[want]!}`;
        faultsSeen[name] = (faultsSeen[name] ?? 0) + 1;
        const fault = model.peekPreNumber(p.invFault);
        if (invValid !== 1 || fault !== want) {
          fail({ slot: k, what: 'invalidate', request: describeInv(s.inv), expected: `valid 1 ${name}`, actual: `valid ${invValid} inv:${STAG_INV_FAULTS[fault] ?? fault}` });
        }
      } else if (invValid !== 0) {
        fail({ slot: k, what: 'invalidate', request: 'none', expected: 'inv_rsp_valid 0', actual: 'inv_rsp_valid 1' });
      }
    },
  });

  tb.reset();
  const c0 = model.cycles;
  tb.run(slots.length);
  const cycles = model.cycles - c0;
  tb.close();

  return {
    dut: 'stag_table',
    module: tb.src!.top,
    depth: opts.depth,
    seed: opts.seed,
    latency: STAG_TABLE_LATENCY,
    mismatches: mismatches.count,
    lookups,
    invalidates,
    configs,
    configsHeld: gen.configsHeld,
    faultsSeen,
    scenarios: gen.scenarios,
    cycles,
    buildSeconds: tb.compiled!.buildMs / 1000,
    ...(mismatches.first && { firstMismatch: mismatches.first }),
  };
}
