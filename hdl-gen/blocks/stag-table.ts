import { type Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * The RNIC's STag table for the receive path (spec/ddp-rdmap.md §5.3 T1–T5, §5.5): one tagged
 * lookup, one Send-with-Invalidate and one configuration write per cycle, fully pipelined, fixed
 * latency STAG_TABLE_LATENCY = 3 (a request sampled at rising edge n is answered by registered
 * outputs that change at edge n + 2, i.e. the consumer samples them at edge n + 3): every input
 * is registered first, then the memories are read, then the checks. It matches
 * ts-model/memory/stag-table.ts (StagTable.check / invalidate) exactly.
 *
 * STag = {24-bit index, 8-bit key} (ts-model/memory/stag.ts). An index ≥ depth is invalid-stag.
 *
 * Storage:
 *   meta  [depth] × 31  {key 8, pd 16, access 5, va 1, invalidatable 1}, read by both ports
 *   range [depth] × 129 {base 64, limit 65}, read by the lookup only
 *     (limit = first TO + length, 65 bits, computed at the config write; first TO = base for a
 *     VA region, 0 for a zero-based one)
 * Both are synchronous-read (registered output) memories with one write port (the config
 * write), so yosys infers RAM; meta has two read ports. The per-entry valid bit is a register
 * (`entry_valid`, depth bits): reset clears every entry in one cycle, and config writes and
 * invalidate commits can land on different entries in the same cycle. No init sweep; the config
 * port is always accepted, also in the first cycle after reset.
 *
 * An invalidate passes its checks in stage 1 and clears its entry's valid bit a cycle later;
 * until then the lookups and invalidates behind it see the entry as gone (forwarded).
 *
 * Ordering (atomic per operation): every operation sees the effect of every operation issued in
 * an earlier cycle. Within one cycle the order is lookup, then invalidate, then config write: a
 * lookup and an invalidate in the same cycle as a config write of their index see the old entry;
 * a lookup in the same cycle as an invalidate of its STag does not see the invalidation; a
 * lookup or invalidate in the next cycle does (the invalidate's commit is forwarded). An
 * invalidate followed in the same or the next cycle by a config write of the same index does
 * not clear the new entry.
 *
 * Caller's contract (as the model's RegionSpec): cfg_length ≥ 1 and cfg_base + cfg_length ≤ 2^64
 * (otherwise the translated address wraps). lk_right is one-hot (several bits: all must be
 * granted; 0 is an access fault). rsp_address is 0 when rsp_fault ≠ 0, and is taken modulo 2^64:
 * the one ok case where the model's address does not fit, an empty access at the end of a
 * zero-based region ending at 2^64, gives 0 (the model says 2^64).
 *
 * Cost: entry_valid is depth flip-flops with two depth:1 read muxes and two index decoders; fine
 * up to a few thousand entries, large at 65536 (the memories themselves map to RAM).
 */
export const STAG_TABLE_LATENCY = 3;

/** Entries of the STag table unless configured (stagDepth). */
export const STAG_TABLE_DEPTH = 256;

/** rsp_fault codes (the model's TaggedFault, in check order). */
export const STAG_FAULTS = ['ok', 'invalid-stag', 'pd-mismatch', 'access', 'to-wrap', 'bounds'] as const;
/** inv_fault codes (the model's InvalidateFault, in check order). */
export const STAG_INV_FAULTS = ['ok', 'invalid-stag', 'pd-mismatch', 'not-invalidatable'] as const;
/** cfg_access / lk_right bits, in ACCESS_RIGHTS order (ts-model/memory/access.ts). */
export const STAG_RIGHT_BITS = ['local-read', 'local-write', 'remote-read', 'remote-write', 'remote-atomic'] as const;

export function stagTableModule(depth: number): Module {
  if (!Number.isInteger(depth) || depth < 16 || depth > 65536 || (depth & (depth - 1)) !== 0) {
    throw new RangeError(`STag table depth must be a power of two from 16 to 65536, got ${depth}`);
  }
  const aw = Math.log2(depth);
  const m = new ModuleBuilder(
    `stag_table_d${depth}`,
    `STag table of ${depth} entries: tagged-buffer checks T1-T5 (spec/ddp-rdmap.md section 5.3,\n` +
      'section 5.5) and Send with Invalidate, one lookup, one invalidate and one config write per cycle.\n' +
      'Latency 3: inputs registered, then a request sampled at clock edge n is answered by registered outputs after edge n+2.\n' +
      'rsp_fault: 0 ok, 1 invalid-stag, 2 pd-mismatch, 3 access, 4 to-wrap, 5 bounds (first failing check).\n' +
      'inv_fault: 0 ok, 1 invalid-stag, 2 pd-mismatch, 3 not-invalidatable.\n' +
      'Order: each operation sees every operation of earlier cycles; within a cycle lookup, then\n' +
      'invalidate, then config write. Reset invalidates every entry (valid bits are registers).',
    { depth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  // Every input is registered first (<port>_q): the requests come from the requester's logic
  // (ddp_rx_ctl's field selects, in rnic_top the QPs' arbiter), so the table's own stages start
  // from flip-flops. All three ports alike: the order of operations within a cycle is kept.
  const registered = (port: Signal, reset?: number): Signal => {
    const q = m.reg(`${port.name}_q`, port.width, reset === undefined ? {} : { reset });
    m.sync(() => m.set(q, port));
    return q;
  };

  const cfgGroup = 'Configuration write (always accepted; effective for requests of later cycles)';
  const cfgValid = registered(m.input('cfg_valid', 1, { group: cfgGroup }), 0);
  const cfgIndex = registered(m.input('cfg_index', aw, { group: cfgGroup, doc: 'STag index' }));
  const cfgKey = registered(m.input('cfg_key', 8, { group: cfgGroup, doc: 'STag key' }));
  const cfgPd = registered(m.input('cfg_pd', 16, { group: cfgGroup, doc: 'protection domain' }));
  const cfgBase = registered(m.input('cfg_base', 64, { group: cfgGroup, doc: 'host address of the first octet' }));
  const cfgLength = registered(m.input('cfg_length', 64, { group: cfgGroup, doc: 'octets, >= 1; base + length <= 2^64' }));
  const cfgAccess = registered(m.input('cfg_access', 5, { group: cfgGroup, doc: 'local-read, local-write, remote-read, remote-write, remote-atomic (bit 0 up)' }));
  const cfgVa = registered(m.input('cfg_va', 1, { group: cfgGroup, doc: '1: VA-based TO (first TO = base); 0: zero-based' }));
  const cfgInvalidatable = registered(m.input('cfg_invalidatable', 1, { group: cfgGroup, doc: 'Send with Invalidate may invalidate it' }));
  const cfgEnable = registered(m.input('cfg_enable', 1, { group: cfgGroup, doc: '1: register/replace as valid; 0: invalidate' }));

  const lkGroup = 'Tagged lookup';
  const lkValid = registered(m.input('lk_valid', 1, { group: lkGroup }), 0);
  const lkStag = registered(m.input('lk_stag', 32, { group: lkGroup }));
  const lkTo = registered(m.input('lk_to', 64, { group: lkGroup, doc: 'tagged offset' }));
  const lkLen = registered(m.input('lk_len', 32, { group: lkGroup, doc: 'octets (0 allowed)' }));
  const lkPd = registered(m.input('lk_pd', 16, { group: lkGroup, doc: "the stream's protection domain" }));
  const lkRight = registered(m.input('lk_right', 5, { group: lkGroup, doc: 'one-hot: the right the access needs' }));

  const rspGroup = `Lookup response (${STAG_TABLE_LATENCY} cycles after the lookup)`;
  const rspValid = m.output('rsp_valid', 1, { group: rspGroup });
  const rspFault = m.output('rsp_fault', 3, { group: rspGroup, doc: '0 ok, 1 invalid-stag, 2 pd-mismatch, 3 access, 4 to-wrap, 5 bounds' });
  const rspAddress = m.output('rsp_address', 64, { group: rspGroup, doc: 'host address of the TO (0 on a fault)' });

  const invGroup = 'Send with Invalidate';
  const invValid = registered(m.input('inv_valid', 1, { group: invGroup }), 0);
  const invStag = registered(m.input('inv_stag', 32, { group: invGroup }));
  const invPd = registered(m.input('inv_pd', 16, { group: invGroup }));
  const invRspGroup = `Invalidate response (${STAG_TABLE_LATENCY} cycles after the invalidate)`;
  const invRspValid = m.output('inv_rsp_valid', 1, { group: invRspGroup });
  const invFault = m.output('inv_fault', 2, { group: invRspGroup, doc: '0 ok (invalidated), 1 invalid-stag, 2 pd-mismatch, 3 not-invalidatable' });

  // ---- Storage --------------------------------------------------------------------------------
  // meta word: [30:23] key, [22:7] pd, [6:2] access, [1] va, [0] invalidatable.
  const meta = m.memory('meta_mem', 31, depth);
  // range word: [128:65] base, [64:0] limit = first TO + length.
  const range = m.memory('range_mem', 129, depth);
  const entryValid = m.reg('entry_valid', depth, { reset: 0, doc: 'per entry: registered, not invalidated' });

  const first = mux(cfgVa, cfgBase, lit(64, 0));
  const cfgLimit = m.let('cfg_limit', first.zext(65).add(cfgLength.zext(65)), { doc: 'first TO + length' });
  m.memoryWrite(meta, cfgValid, cfgIndex, cat(cfgKey, cfgPd, cfgAccess, cfgVa, cfgInvalidatable));
  m.memoryWrite(range, cfgValid, cfgIndex, cat(cfgBase, cfgLimit));

  // ---- Stage 0 (the cycle after issue): indices, valid bits with the commit of the invalidate ahead
  const stagIndex = (stag: typeof lkStag) => stag.slice(8 + aw - 1, 8);
  const stagAbove = (stag: typeof lkStag) => stag.slice(31, 8 + aw).any();
  const lkIdx = m.let('lk_index', stagIndex(lkStag));
  const invIdx = m.let('inv_index', stagIndex(invStag));

  // The invalidate in stage 1 commits at the end of this cycle (declared below).
  const commit = m.wire('inv_commit', 1, { doc: 'the invalidate in stage 1 passed its checks: its entry is cleared at the next edge' });
  const commitIdx = m.reg('iv1_index', aw);
  // The clear itself waits a register: the checks and the entry's decode are not one path. Until
  // it lands, reads of its entry see it as gone (forwarded from both places).
  const clear2 = { valid: m.reg('inv_clear_valid', 1, { reset: 0, doc: 'an invalidate clears its entry at this edge' }), index: m.reg('inv_clear_index', aw) };
  // The entry's valid bit (a depth:1 select) and the commit ahead are registered apart and
  // combined in stage 1: neither waits for the other.
  // The entry's valid bit is a depth:1 select, split over stages 0 and 1: stage 0 picks, in each
  // group of 2^loBits consecutive entries, the one the index's low bits name (2^hiBits candidates
  // registered); stage 1 picks the candidate its high bits name. (One select of the whole vector
  // maps to a deeper network.)
  const hiBits = Math.ceil(aw / 2);
  const loBits = aw - hiBits;
  const pick = (bits: Expr, sel: Expr): Expr => bits.shr(sel).bit(0);
  const candidates = (idx: typeof lkIdx): Expr =>
    cat(...Array.from({ length: 1 << hiBits }, (_, g) => pick(entryValid.slice(((g + 1) << loBits) - 1, g << loBits), idx.slice(loBits - 1, 0))).reverse());
  const gone = (stag: typeof lkStag, idx: typeof lkIdx) => commit.and(commitIdx.eq(idx)).or(clear2.valid.and(clear2.index.eq(idx))).or(stagAbove(stag));

  // ---- Stage 1 registers ----------------------------------------------------------------------
  const lk1 = {
    valid: m.reg('lk1_valid', 1, { reset: 0 }),
    cands: m.reg('lk1_valid_cands', 1 << hiBits, { doc: "the valid bits of the entries the index's low bits name, one per group" }),
    hi: m.reg('lk1_index_hi', hiBits, { doc: "the index's high bits: the group" }),
    gone: m.reg('lk1_gone', 1, { doc: 'index past the table, or its entry invalidated at this edge' }),
    key: m.reg('lk1_key', 8),
    pd: m.reg('lk1_pd', 16),
    right: m.reg('lk1_right', 5),
    to: m.reg('lk1_to', 64),
    end: m.reg('lk1_end', 65, { doc: 'TO + length, 65 bits' }),
    meta: m.reg('lk1_meta', 31, { doc: 'meta_mem read (registered read port)' }),
    range: m.reg('lk1_range', 129, { doc: 'range_mem read (registered read port)' }),
  };
  const iv1 = {
    valid: m.reg('iv1_valid', 1, { reset: 0 }),
    cands: m.reg('iv1_valid_cands', 1 << hiBits, { doc: "the valid bits of the entries the index's low bits name, one per group" }),
    hi: m.reg('iv1_index_hi', hiBits, { doc: "the index's high bits: the group" }),
    gone: m.reg('iv1_gone', 1, { doc: 'index past the table, or its entry invalidated at this edge' }),
    key: m.reg('iv1_key', 8),
    pd: m.reg('iv1_pd', 16),
    cfgHit: m.reg('iv1_cfg_hit', 1, { doc: 'a config write of the same index came in the same cycle (it is later)' }),
    meta: m.reg('iv1_meta', 31, { doc: 'meta_mem read (registered read port)' }),
  };
  m.sync(() => {
    m.set(lk1.valid, lkValid);
    m.set(lk1.cands, candidates(lkIdx));
    m.set(lk1.hi, lkIdx.slice(aw - 1, loBits));
    m.set(lk1.gone, gone(lkStag, lkIdx));
    m.set(lk1.key, lkStag.slice(7, 0));
    m.set(lk1.pd, lkPd);
    m.set(lk1.right, lkRight);
    m.set(lk1.to, lkTo);
    m.set(lk1.end, lkTo.zext(65).add(lkLen.zext(65)));
    m.set(lk1.meta, meta.read(lkIdx));
    m.set(lk1.range, range.read(lkIdx));
    m.set(iv1.valid, invValid);
    m.set(iv1.cands, candidates(invIdx));
    m.set(iv1.hi, invIdx.slice(aw - 1, loBits));
    m.set(iv1.gone, gone(invStag, invIdx));
    m.set(iv1.key, invStag.slice(7, 0));
    m.set(iv1.pd, invPd);
    m.set(commitIdx, invIdx);
    m.set(iv1.cfgHit, cfgValid.and(cfgIndex.eq(invIdx)));
    m.set(iv1.meta, meta.read(invIdx));
  });

  // ---- Stage 1: the checks in the model's order -----------------------------------------------
  const fields = (w: typeof lk1.meta) => ({ key: w.slice(30, 23), pd: w.slice(22, 7), access: w.slice(6, 2), va: w.bit(1), invalidatable: w.bit(0) });
  const lm = fields(lk1.meta);
  m.allowUnused(lk1.meta, 'the lookup does not need the invalidatable flag');
  const base = lk1.range.slice(128, 65);
  const limit = lk1.range.slice(64, 0);
  const bitOf = (c: typeof lk1.cands, hi: typeof lk1.hi) => pick(c, hi);
  const tInvalid = m.let('t1_invalid_stag', bitOf(lk1.cands, lk1.hi).not().or(lk1.gone).or(lm.key.ne(lk1.key)));
  const tPd = m.let('t2_pd_mismatch', lm.pd.ne(lk1.pd));
  const tAccess = m.let('t3_access', lk1.right.eq(0).or(lm.access.and(lk1.right).ne(lk1.right)));
  const tWrap = m.let('t4_to_wrap', lk1.end.bit(64).and(lk1.end.slice(63, 0).any()), { doc: 'TO + length > 2^64' });
  const tBounds = m.let('t5_bounds', lm.va.and(lk1.to.lt(base)).or(lk1.end.gt(limit)), { doc: 'TO < first TO or TO + length > first TO + length of the region' });
  const fault = m.let(
    'lk_fault',
    mux(tInvalid, lit(3, 1), mux(tPd, lit(3, 2), mux(tAccess, lit(3, 3), mux(tWrap, lit(3, 4), mux(tBounds, lit(3, 5), lit(3, 0)))))),
  );
  // VA: address = base + (TO − base) = TO; zero-based: base + TO.
  const address = mux(lm.va, lk1.to, base.add(lk1.to));

  const im = fields(iv1.meta);
  m.allowUnused(iv1.meta, 'the invalidate needs key, PD and the invalidatable flag only');
  const iInvalid = m.let('inv_invalid_stag', bitOf(iv1.cands, iv1.hi).not().or(iv1.gone).or(im.key.ne(iv1.key)));
  const iPd = m.let('inv_pd_mismatch', im.pd.ne(iv1.pd));
  const iNot = m.let('inv_not_invalidatable', im.invalidatable.not());
  const iFault = m.let('inv_fault_now', mux(iInvalid, lit(2, 1), mux(iPd, lit(2, 2), mux(iNot, lit(2, 3), lit(2, 0)))));
  m.assign(commit, iv1.valid.and(iInvalid.or(iPd).or(iNot).not()).and(iv1.cfgHit.not()));

  // Valid bits: the commit clears its entry a cycle later, then a config write (later in order)
  // sets its own; a config write of that entry in between (the cycle after the invalidate's) is
  // later too, so the clear is dropped.
  m.sync(() => {
    m.set(clear2.valid, commit.and(cfgValid.and(cfgIndex.eq(commitIdx)).not()));
    m.set(clear2.index, commitIdx);
  });
  const onehot = (idx: typeof lkIdx) => lit(depth, 1).shl(idx);
  const clear = mux(clear2.valid, onehot(clear2.index), lit(depth, 0));
  const cfgMask = mux(cfgValid, onehot(cfgIndex), lit(depth, 0));
  const cfgSet = mux(cfgEnable, cfgMask, lit(depth, 0));
  m.sync(() => m.set(entryValid, entryValid.and(clear.or(cfgMask).not()).or(cfgSet)));

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
    m.set(r2.address, mux(fault.eq(0), address, lit(64, 0)));
    m.set(i2.valid, iv1.valid);
    m.set(i2.fault, iFault);
  });
  m.assign(rspValid, r2.valid);
  m.assign(rspFault, r2.fault);
  m.assign(rspAddress, r2.address);
  m.assign(invRspValid, i2.valid);
  m.assign(invFault, i2.fault);
  return m.build();
}
