import { type Expr, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { stateMachine } from '../lib/fsm';
import { anyOf, oneHotMux, priorityMux } from '../lib/onehot';
import { matches } from '../lib/ram';
import { portGroup } from '../lib/ports';
import { record } from '../lib/record';

/**
 * The RNIC's STag table for the receive path (spec/ddp-rdmap.md §5.3 T1–T5, §5.5): one tagged
 * lookup, one Send-with-Invalidate and one configuration write per cycle, fully pipelined, fixed
 * latency STAG_TABLE_LATENCY = 3 (a request sampled at rising edge n is answered by registered
 * outputs that change at edge n + 2, i.e. the consumer samples them at edge n + 3). It matches
 * ts-model/memory/stag-table.ts (StagTable.check / invalidate) exactly, the model's table
 * starting empty.
 *
 * Pipeline (every stage starts from flip-flops or a block RAM's read register):
 *   edge n     the request is registered (<port>_q) and its entry is read: the RAMs' address
 *              registers take the index straight from lk_stag / inv_stag (the requester's path
 *              ends at the RAM's address pins as it would at a register); a config write taken
 *              at edge n is written at edge n (cfg_* straight to the write ports)
 *   stage 0    the RAM words (through the RAM's bank mux at 65536 entries) compared with the
 *              request: key, PD, rights, valid; TO + length and T4; the forwarding compares
 *   stage 1    T5 (the range compares), the translated address, the first failing check; an
 *              invalidate commits and writes its clear at the end of this stage
 *   stage 2    registered responses
 *
 * STag = {24-bit index, 8-bit key} (ts-model/memory/stag.ts). An index ≥ depth is invalid-stag.
 *
 * Storage: two synchronous-read (registered read port) memories, so yosys infers block RAM at
 * every depth up to 65536; no per-entry flip-flop.
 *   meta  [depth] × STAG_META  {valid, invalidatable, va, access 5, pd 16, key 8}, read by both
 *         the lookup and the invalidate (two read ports, one write port)
 *   range [depth] × STAG_RANGE {limit 65, base 64}, read by the lookup only; written by config
 *     (limit = first TO + length, 65 bits, computed at the config write; first TO = base for a
 *     VA region, 0 for a zero-based one)
 * meta's one write port serves three writers, at most one per cycle: the init sweep, a config
 * write (the whole word, valid = cfg_enable) and an invalidate's clear (the whole word zero:
 * with valid 0 the other fields are never looked at, so the clear needs no read-modify-write).
 *
 * Reset and the init sweep: after rst falls the table writes meta's entries 0, 1, …, depth − 1
 * with valid 0, one per cycle (depth cycles; the block RAM keeps its contents over a reset).
 * During the sweep cfg_ready is 0, and every lookup and invalidate taken while it writes is
 * answered invalid-stag (its read is not trusted): what the model's empty table says, since no
 * config write can have been taken. cfg_ready first reads 1 in cycle `depth` after the first
 * cycle with rst low (stagTableInitCycles); requests taken from that cycle on see the RAM.
 *
 * Config writes are taken at an edge where cfg_valid and cfg_ready are both 1 (valid/ready; the
 * requester holds the write while cfg_ready is 0). cfg_ready is a register; it is 0 during reset
 * and the sweep, and in the cycle two after an invalidate request was taken (that invalidate is
 * in stage 1 and may write its clear at the edge the config write would be written): a config
 * write waits that one cycle. Lookups and invalidates are always taken.
 *
 * An invalidate passes its checks in stage 1 and clears its entry's valid bit at the end of it.
 * The requests behind it that read the RAM before the clear landed see the entry as gone
 * (forwarded): a request one cycle behind notes the index match in its stage 0 and takes the
 * commit (iv2_commit) in its stage 1; a request two cycles behind read at the clear's own edge
 * (read-first) and compares with it (iv2_cleared) in its stage 0.
 *
 * Ordering (atomic per operation): every operation sees the effect of every operation taken in
 * an earlier cycle. Within one cycle the order is lookup, then invalidate, then config write: a
 * lookup and an invalidate in the same cycle as a config write of their index see the old entry;
 * a lookup in the same cycle as an invalidate of its STag does not see the invalidation; a
 * lookup or invalidate in the next cycle does (the invalidate's commit is forwarded). An
 * invalidate followed in the same or the next cycle by a config write of the same index does
 * not clear the new entry (a config two cycles after it is not taken, cfg_ready; three or more
 * cycles after it, the clear has landed first).
 *
 * Caller's contract (as the model's RegionSpec): cfg_length ≥ 1 and cfg_base + cfg_length ≤ 2^64
 * (otherwise the translated address wraps). lk_right is one-hot (several bits: all must be
 * granted; 0 is an access fault). rsp_address is 0 when rsp_fault ≠ 0, and is taken modulo 2^64:
 * the one ok case where the model's address does not fit, an empty access at the end of a
 * zero-based region ending at 2^64, gives 0 (the model says 2^64).
 *
 * Cost: the memories (block RAM; meta twice, one copy per read port), the request pipeline, a
 * log2(depth)-bit sweep counter and a few index compares for the forwarding; nothing grows with
 * depth but the index width. At 65536 entries (synth_xilinx -abc9): 5 LUT levels, ~1300 LUTs,
 * ~620 flip-flops, 354 RAMB36.
 */
export const STAG_TABLE_LATENCY = 3;

/** Entries of the STag table unless configured (stagDepth). */
export const STAG_TABLE_DEPTH = 256;

/** Cycles after reset (from the first cycle with rst low) before cfg_ready can read 1: the init sweep. */
export const stagTableInitCycles = (depth: number): number => depth;

/** rsp_fault codes (the model's TaggedFault, in check order). */
export const STAG_FAULTS = ['ok', 'invalid-stag', 'pd-mismatch', 'access', 'to-wrap', 'bounds'] as const;
/** inv_fault codes (the model's InvalidateFault, in check order). */
export const STAG_INV_FAULTS = ['ok', 'invalid-stag', 'pd-mismatch', 'not-invalidatable'] as const;
/** cfg_access / lk_right bits, in ACCESS_RIGHTS order (ts-model/memory/access.ts). */
export const STAG_RIGHT_BITS = ['local-read', 'local-write', 'remote-read', 'remote-write', 'remote-atomic'] as const;

/** One meta_mem word: what the lookup and the invalidate check (T1–T3, §5.5). */
export const STAG_META = record('stag_meta', {
  valid: { width: 1, doc: 'registered and not invalidated; 0: invalid-stag, the other fields unused' },
  invalidatable: { width: 1, doc: 'Send with Invalidate may invalidate it' },
  va: { width: 1, doc: '1: VA-based TO (first TO = base); 0: zero-based' },
  access: { width: 5, doc: 'granted rights, STAG_RIGHT_BITS order (bit 0 up)' },
  pd: { width: 16, doc: 'protection domain' },
  key: { width: 8, doc: 'STag key' },
});

/** One range_mem word: what the lookup's bounds check (T5) and translation need. */
export const STAG_RANGE = record('stag_range', {
  limit: { width: 65, doc: 'first TO + length' },
  base: { width: 64, doc: 'host address of the first octet' },
});

/**
 * One entry as the configuration write port takes it (cfg_<field>; rnic_top's stag_cfg_<field>),
 * for a table of `depth` entries: the STag (index and key), what the checks compare, and whether
 * the write registers or invalidates the entry. The AXI4-Lite register map stages the same fields.
 */
export const stagCfgLayout = (depth: number) =>
  record('stag_cfg', {
    index: { width: Math.log2(depth), doc: 'STag index', ref: 'RFC 5041 §4 STag (spec/ddp-rdmap.md §1.2)' },
    key: { width: 8, doc: 'STag key', ref: 'RFC 5041 §4 STag (spec/ddp-rdmap.md §1.2)' },
    pd: { width: 16, doc: 'protection domain', ref: 'RFC 5041 §8 (spec/ddp-rdmap.md §5.3 T2)' },
    base: { width: 64, doc: 'host address of the first octet', ref: 'RFC 5041 §7.1 (spec/ddp-rdmap.md §5.3 T5)' },
    length: { width: 64, doc: 'octets, >= 1; base + length <= 2^64', ref: 'RFC 5041 §7.1 (spec/ddp-rdmap.md §5.3 T4, T5)' },
    access: { width: STAG_RIGHT_BITS.length, doc: 'local-read, local-write, remote-read, remote-write, remote-atomic (bit 0 up)', ref: 'spec/ddp-rdmap.md §5.3 T3, §5.5' },
    va: { width: 1, doc: '1: VA-based TO (first TO = base); 0: zero-based', ref: 'RFC 5041 §7.1 (spec/ddp-rdmap.md §5.3)' },
    invalidatable: { width: 1, doc: 'Send with Invalidate may invalidate it', ref: 'RFC 5040 §7.2 (spec/ddp-rdmap.md §5.5)' },
    enable: { width: 1, doc: '1: register/replace as valid; 0: invalidate' },
  });

export function stagTableModule(depth: number): Module {
  if (!Number.isInteger(depth) || depth < 16 || depth > 65536 || (depth & (depth - 1)) !== 0) {
    throw new RangeError(`STag table depth must be a power of two from 16 to 65536, got ${depth}`);
  }
  const aw = Math.log2(depth);
  const m = new ModuleBuilder(
    `stag_table_d${depth}`,
    `STag table of ${depth} entries in block RAM: tagged-buffer checks T1-T5 (spec/ddp-rdmap.md section 5.3,\n` +
      'section 5.5) and Send with Invalidate, one lookup, one invalidate and one config write per cycle.\n' +
      'Latency 3: a request sampled at clock edge n (which also reads the RAM) is answered by registered outputs after edge n+2.\n' +
      'rsp_fault: 0 ok, 1 invalid-stag, 2 pd-mismatch, 3 access, 4 to-wrap, 5 bounds (first failing check).\n' +
      'inv_fault: 0 ok, 1 invalid-stag, 2 pd-mismatch, 3 not-invalidatable.\n' +
      'Order: each operation sees every operation of earlier cycles; within a cycle lookup, then\n' +
      `invalidate, then config write. After reset an init sweep clears the ${depth} entries (${stagTableInitCycles(depth)} cycles):\n` +
      'cfg_ready is 0 and lookups and invalidates answer invalid-stag until it ends. cfg_ready is also 0\n' +
      'for the cycle two after an invalidate was taken (its clear and a config write share the RAM write).',
    { depth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  // The request's edge reads the RAMs (their address registers are the first stage, the request
  // ports drive the addresses), and a config write is written at its own edge; the rest of each
  // request is registered there too (<port>_q), so the table's own logic starts from flip-flops.
  const registered = (port: Signal, reset?: number): Signal => {
    const q = m.reg(`${port.name}_q`, port.width, reset === undefined ? {} : { reset });
    m.sync(() => m.set(q, port));
    return q;
  };

  const cfgGroup = 'Configuration write (taken when cfg_valid and cfg_ready; effective for requests of later cycles)';
  const cfg = {
    valid: m.input('cfg_valid', 1, { group: cfgGroup }),
    ready: m.output('cfg_ready', 1, { group: cfgGroup, doc: '0 during reset and the init sweep, and two cycles after an invalidate was taken' }),
    ...portGroup(m, 'cfg', stagCfgLayout(depth), 'input', cfgGroup).ports,
  };
  const cfgReady = m.reg('cfg_ready_q', 1, { reset: 0, doc: 'cfg_ready: a config write taken at the next edge can have the meta write port' });
  m.assign(cfg.ready, cfgReady);
  const cfgTake = m.let('cfg_take', cfg.valid.and(cfgReady), { doc: 'a config write is taken (and written) at this edge' });
  const cfgTaken = m.reg('cfg_taken_q', 1, { reset: 0, doc: 'a config write was taken at the last edge' });
  const cfgTakenIndex = m.reg('cfg_taken_index_q', aw, { doc: 'its index' });
  m.sync(() => {
    m.set(cfgTaken, cfgTake);
    m.set(cfgTakenIndex, cfg.index);
  });

  const lkGroup = 'Tagged lookup (always taken)';
  const lk = {
    valid: m.input('lk_valid', 1, { group: lkGroup }),
    stag: m.input('lk_stag', 32, { group: lkGroup }),
    to: m.input('lk_to', 64, { group: lkGroup, doc: 'tagged offset' }),
    len: m.input('lk_len', 32, { group: lkGroup, doc: 'octets (0 allowed)' }),
    pd: m.input('lk_pd', 16, { group: lkGroup, doc: "the stream's protection domain" }),
    right: m.input('lk_right', 5, { group: lkGroup, doc: 'one-hot: the right the access needs' }),
  };
  const lkValid = registered(lk.valid, 0);
  const lkStag = registered(lk.stag);
  const lkTo = registered(lk.to);
  const lkLen = registered(lk.len);
  const lkPd = registered(lk.pd);
  const lkRight = registered(lk.right);

  const rspGroup = `Lookup response (${STAG_TABLE_LATENCY} cycles after the lookup)`;
  const rspValid = m.output('rsp_valid', 1, { group: rspGroup });
  const rspFault = m.output('rsp_fault', 3, { group: rspGroup, doc: '0 ok, 1 invalid-stag, 2 pd-mismatch, 3 access, 4 to-wrap, 5 bounds' });
  const rspAddress = m.output('rsp_address', 64, { group: rspGroup, doc: 'host address of the TO (0 on a fault)' });

  const invGroup = 'Send with Invalidate (always taken)';
  const inv = {
    valid: m.input('inv_valid', 1, { group: invGroup }),
    stag: m.input('inv_stag', 32, { group: invGroup }),
    pd: m.input('inv_pd', 16, { group: invGroup }),
  };
  const invValid = registered(inv.valid, 0);
  const invStag = registered(inv.stag);
  const invPd = registered(inv.pd);
  const invRspGroup = `Invalidate response (${STAG_TABLE_LATENCY} cycles after the invalidate)`;
  const invRspValid = m.output('inv_rsp_valid', 1, { group: invRspGroup });
  const invFault = m.output('inv_fault', 2, { group: invRspGroup, doc: '0 ok (invalidated), 1 invalid-stag, 2 pd-mismatch, 3 not-invalidatable' });

  // ---- Storage --------------------------------------------------------------------------------
  const meta = m.memory('meta_mem', STAG_META.width, depth);
  const range = m.memory('range_mem', STAG_RANGE.width, depth);
  const stagIndex = (stag: Expr) => stag.slice(8 + aw - 1, 8);
  const stagAbove = (stag: Expr) => stag.slice(31, 8 + aw).any();

  // The init sweep: the RAM is not cleared by rst, so every entry is written invalid once.
  const init = stateMachine(m, 'init', ['SWEEP', 'READY'], {
    reset: 'SWEEP',
    doc: 'init sweep after reset: SWEEP writes entry init_index invalid each cycle, READY takes config writes',
    meaning: { SWEEP: 'clearing the entries, lookups and invalidates answer invalid-stag', READY: 'every entry written at least once since reset' },
  });
  const sweeping = m.let('init_sweeping', init.is('SWEEP'), { doc: 'the init sweep writes at this edge: cfg_ready 0, reads untrusted' });
  const sweepIndex = m.reg('init_index', aw, { reset: 0, doc: 'the entry the sweep clears at this edge' });
  const sweepLast = m.let('init_last', sweepIndex.eq(depth - 1), { doc: 'the sweep clears its last entry at this edge' });
  const readUntrusted = m.reg('init_read_untrusted', 1, { reset: 1, doc: 'the requests now in stage 0 read the RAM during the sweep' });
  m.sync(() => {
    m.set(readUntrusted, sweeping);
    m.when(sweeping, () => {
      m.set(sweepIndex, sweepIndex.add(1));
      m.when(sweepLast, () => init.goto('READY'));
    });
  });

  // ---- Issue edge: the RAMs read at the request ports' indices (registered read ports) ---------
  const lkRead = {
    meta: m.reg('lk_meta_rd', STAG_META.width, { doc: 'meta_mem read at the lookup edge', record: STAG_META }),
    range: m.reg('lk_range_rd', STAG_RANGE.width, { doc: 'range_mem read at the lookup edge', record: STAG_RANGE }),
  };
  const invRead = m.reg('inv_meta_rd', STAG_META.width, { doc: 'meta_mem read at the invalidate edge', record: STAG_META });
  m.sync(() => {
    m.set(lkRead.meta, meta.read(stagIndex(lk.stag)));
    m.set(lkRead.range, range.read(stagIndex(lk.stag)));
    m.set(invRead, meta.read(stagIndex(inv.stag)));
  });

  // ---- Stage 0 (the cycle after the edge): the compares against the entry read ------------------
  const lkIdx = m.let('lk_index', stagIndex(lkStag));
  const invIdx = m.let('inv_index', stagIndex(invStag));
  // The fields read, named (outside the processes: a view makes its wires on first use).
  const lmView = STAG_META.view(lkRead.meta, { m, prefix: 'lk_rd' });
  const imView = STAG_META.view(invRead, { m, prefix: 'inv_rd' });
  const lm = { valid: lmView.valid, key: lmView.key, pd: lmView.pd, access: lmView.access, va: lmView.va };
  const im = { valid: imView.valid, key: imView.key, pd: imView.pd, invalidatable: imView.invalidatable };
  m.allowUnused(lkRead.meta, 'the lookup does not need the invalidatable flag');
  m.allowUnused(invRead, 'the invalidate needs valid, key, PD and the invalidatable flag only');

  // The invalidate in stage 1 (iv1_*) commits at the end of this cycle (inv_commit, below) and
  // writes its clear at that edge; iv2_* holds its outcome a cycle on. A request whose RAM read
  // was at that same edge (read-first: it missed the clear) is now in stage 0: gone if iv2_cleared
  // names its index. A request one cycle behind the invalidate (in stage 0 while the invalidate is
  // in stage 1) notes the index match and takes the commit from iv2_commit in its stage 1.
  const iv1Index = m.reg('iv1_index', aw);
  const iv1Valid = m.reg('iv1_valid', 1, { reset: 0 });
  const iv2 = {
    commit: m.reg('iv2_commit', 1, { reset: 0, doc: 'the invalidate a cycle ahead of stage 1 passed its checks (its entry is gone for the requests behind it)' }),
    cleared: m.reg('iv2_cleared', 1, { reset: 0, doc: 'and its clear was written at the last edge (no config write of its index came between)' }),
    index: m.reg('iv2_index', aw),
  };
  const gone0 = (stag: Expr, idx: Expr) => matches(iv2.cleared, iv2.index, idx).or(stagAbove(stag)).or(readUntrusted);
  const behind0 = (idx: Expr) => matches(iv1Valid, iv1Index, idx);
  const lkEnd = m.let('lk_end', lkTo.zext(65).add(lkLen.zext(65)), { doc: 'TO + length, 65 bits' });

  // ---- Stage 1 registers: the outcomes of T1-T4 (but for the forwarding), what T5 and the address need
  const lk1 = {
    valid: m.reg('lk1_valid', 1, { reset: 0 }),
    gone: m.reg('lk1_gone', 1, { doc: 'index past the table, its entry cleared at the read edge, or read during the init sweep' }),
    behind: m.reg('lk1_behind_inv', 1, { doc: 'the invalidate a cycle ahead named the same index (gone if it committed)' }),
    entry: m.reg('lk1_entry_valid', 1, { doc: 'the entry read is valid' }),
    keyOk: m.reg('lk1_key_ok', 1, { doc: "the entry's key is the STag's (T1)" }),
    pdOk: m.reg('lk1_pd_ok', 1, { doc: "the entry's PD is the stream's (T2)" }),
    accessOk: m.reg('lk1_access_ok', 1, { doc: 'lk_right is not 0 and the entry grants it (T3)' }),
    wrap: m.reg('lk1_wrap', 1, { doc: 'TO + length > 2^64 (T4)' }),
    va: m.reg('lk1_va', 1, { doc: "the entry's addressing: 1 VA-based" }),
    range: m.reg('lk1_range', STAG_RANGE.width, { doc: 'the range read', record: STAG_RANGE }),
    to: m.reg('lk1_to', 64),
    end: m.reg('lk1_end', 65, { doc: 'TO + length, 65 bits' }),
  };
  const iv1 = {
    gone: m.reg('iv1_gone', 1, { doc: 'index past the table, its entry cleared at the read edge, or read during the init sweep' }),
    behind: m.reg('iv1_behind_inv', 1, { doc: 'the invalidate a cycle ahead named the same index (gone if it committed)' }),
    entry: m.reg('iv1_entry_valid', 1, { doc: 'the entry read is valid' }),
    keyOk: m.reg('iv1_key_ok', 1),
    pdOk: m.reg('iv1_pd_ok', 1),
    invalidatable: m.reg('iv1_invalidatable', 1),
    cfgHit: m.reg('iv1_cfg_hit', 1, { doc: 'a config write of the same index was taken in the same cycle (it is later): no effect' }),
    cfgAfter: m.reg('iv1_cfg_after', 1, { doc: 'a config write of the same index was taken a cycle later: the clear must not land over it' }),
  };
  m.sync(() => {
    m.set(lk1.valid, lkValid);
    m.set(lk1.gone, gone0(lkStag, lkIdx));
    m.set(lk1.behind, behind0(lkIdx));
    m.set(lk1.entry, lm.valid);
    m.set(lk1.keyOk, lm.key.eq(lkStag.slice(7, 0)));
    m.set(lk1.pdOk, lm.pd.eq(lkPd));
    m.set(lk1.accessOk, lkRight.any().and(lm.access.and(lkRight).eq(lkRight)));
    m.set(lk1.wrap, lkEnd.bit(64).and(lkEnd.slice(63, 0).any()));
    m.set(lk1.va, lm.va);
    m.set(lk1.range, lkRead.range);
    m.set(lk1.to, lkTo);
    m.set(lk1.end, lkEnd);
    m.set(iv1Valid, invValid);
    m.set(iv1Index, invIdx);
    m.set(iv1.gone, gone0(invStag, invIdx));
    m.set(iv1.behind, behind0(invIdx));
    m.set(iv1.entry, im.valid);
    m.set(iv1.keyOk, im.key.eq(invStag.slice(7, 0)));
    m.set(iv1.pdOk, im.pd.eq(invPd));
    m.set(iv1.invalidatable, im.invalidatable);
    m.set(iv1.cfgHit, matches(cfgTaken, cfgTakenIndex, invIdx));
    m.set(iv1.cfgAfter, matches(cfgTake, cfg.index, invIdx));
  });

  // ---- Stage 1: the checks in the model's order -----------------------------------------------
  const lr = STAG_RANGE.view(lk1.range, { m, prefix: 'lk1_range' });
  const tBounds = m.let('t5_bounds', lk1.va.and(lk1.to.lt(lr.base)).or(lk1.end.gt(lr.limit)), { doc: 'TO < first TO or TO + length > first TO + length of the region' });
  // VA: address = base + (TO − base) = TO; zero-based: base + TO.
  const address = mux(lk1.va, lk1.to, lr.base.add(lk1.to));
  // T1 also fails if the invalidate a cycle ahead of this request committed (iv2_commit now).
  const tInvalid = m.let('t1_invalid_stag', lk1.entry.not().or(lk1.gone).or(lk1.behind.and(iv2.commit)).or(lk1.keyOk.not()));
  const checks = [tInvalid, lk1.pdOk.not(), lk1.accessOk.not(), lk1.wrap, tBounds];
  const fault = m.let('lk_fault', priorityMux(checks.map((c, i) => [c, lit(3, i + 1)] as const), lit(3, 0)), { doc: 'the first failing check (STAG_FAULTS)' });
  const ok = m.let('lk_ok', anyOf(checks).not(), { doc: 'every check passed (rsp_fault 0)' });

  const iInvalid = m.let('inv_invalid_stag', iv1.entry.not().or(iv1.gone).or(iv1.behind.and(iv2.commit)).or(iv1.keyOk.not()));
  const iChecks = [iInvalid, iv1.pdOk.not(), iv1.invalidatable.not()];
  const iFault = m.let('inv_fault_now', priorityMux(iChecks.map((c, i) => [c, lit(2, i + 1)] as const), lit(2, 0)), { doc: 'the first failing check (STAG_INV_FAULTS)' });
  const commit = m.let('inv_commit', iv1Valid.and(anyOf(iChecks).not()).and(iv1.cfgHit.not()), { doc: 'the invalidate in stage 1 passed its checks' });
  const clear = m.let('inv_clear', commit.and(iv1.cfgAfter.not()), { doc: 'meta write: its entry cleared at this edge' });
  m.sync(() => {
    m.set(iv2.commit, commit);
    m.set(iv2.cleared, clear);
    m.set(iv2.index, iv1Index);
  });

  // ---- The write ports, at the edge: meta by the sweep, a config write or a clear (one-hot:
  // cfg_ready is 0 while the sweep runs and while an invalidate is in stage 1); range by config.
  // cfg_ready for the next cycle: 0 while the sweep goes on, and 0 when the invalidate in stage 0
  // now is in stage 1 then.
  m.sync(() => m.set(cfgReady, sweeping.and(sweepLast.not()).or(invValid).not()));
  const cfgWord = STAG_META.pack({ valid: cfg.enable, invalidatable: cfg.invalidatable, va: cfg.va, access: cfg.access, pd: cfg.pd, key: cfg.key });
  const metaWrite = {
    enable: m.let('meta_we', cfgTake.or(clear).or(sweeping), { doc: 'meta write: a config write, a clear or the sweep' }),
    index: m.let('meta_wr_index', oneHotMux([[cfgTake, cfg.index], [clear, iv1Index], [sweeping, sweepIndex]]), { doc: 'meta write address' }),
    // A clear and the sweep write the word zero (valid 0): the other fields of an invalid entry
    // are never looked at.
    word: m.let('meta_wr_word', mux(cfgTake, cfgWord, STAG_META.zero()), { doc: 'meta write data', record: STAG_META }),
  };
  m.memoryWrite(meta, metaWrite.enable, metaWrite.index, metaWrite.word);
  const first = mux(cfg.va, cfg.base, lit(64, 0));
  const cfgLimit = m.let('cfg_limit', first.zext(65).add(cfg.length.zext(65)), { doc: 'first TO + length' });
  m.memoryWrite(range, cfgTake, cfg.index, STAG_RANGE.pack({ base: cfg.base, limit: cfgLimit }));

  // ---- Stage 2: registered responses ----------------------------------------------------------
  const r2 = {
    valid: m.reg('lk2_valid', 1, { reset: 0 }),
    fault: m.reg('lk2_fault', 3),
    address: m.reg('lk2_address', 64),
  };
  const i2 = { valid: m.reg('iv2_valid', 1, { reset: 0 }), fault: m.reg('iv2_fault', 2) };
  m.sync(() => {
    m.set(r2.valid, lk1.valid);
    m.set(r2.fault, fault);
    m.set(r2.address, mux(ok, address, lit(64, 0)));
    m.set(i2.valid, iv1Valid);
    m.set(i2.fault, iFault);
  });
  m.assign(rspValid, r2.valid);
  m.assign(rspFault, r2.fault);
  m.assign(rspAddress, r2.address);
  m.assign(invRspValid, i2.valid);
  m.assign(invFault, i2.fault);
  return m.build();
}
