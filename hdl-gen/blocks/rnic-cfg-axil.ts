import { type Expr, cat, lit } from '../core/expr';
import { ModuleBuilder, type CaseLabel, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { AXI_RESP, WORD_BITS, WORD_BYTES, type Register, type RegisterMap } from '../lib/regmap';
import { rnicRegisterMap, type RegMapConfig } from './rnic-regmap';

/**
 * rnic_cfg_axil: rnic_top's configuration inputs behind an AXI4-Lite slave (32-bit data), the
 * register map of rnic-regmap.ts. Every register and bit position comes from the map; nothing
 * here names a field.
 *
 * Write channel (verilog-axi's axil_reg_if_wr shape): the address and the data are each taken
 * into a holding register (awready / wready are those registers' empty flags), and the write is
 * done once both are held, its response is not pending, and the port it targets is not busy. A
 * staged port is busy from the write of its commit register until its valid/ready handshake with
 * the top; meanwhile its fields drive the port and must hold, so a write to any of its registers
 * waits (the write channel stalls; reads go on). wstrb selects the octets written; bits above a
 * field's width are ignored and read as 0. A read takes two cycles: the address is taken into a
 * register, then the word it selects (arready is 0 until the response is taken).
 *
 * Responses: OKAY; SLVERR for a write to a read-only register and for a refused commit (a QP or
 * STag index beyond the capabilities: nothing is sent); DECERR for any access to an unmapped
 * address (reads return 0). The two low address bits are ignored; awprot / arprot are not used.
 */
export function rnicCfgAxilModule(c: RegMapConfig): Module {
  const map = rnicRegisterMap(c);
  return cfgAxilModule(`rnic_cfg_axil_w${c.width}_q${c.qps}_d${c.stagDepth}`, map, { bytes: c.width, qps: c.qps, stagDepth: c.stagDepth });
}

function cfgAxilModule(name: string, map: RegisterMap, params: Record<string, number>): Module {
  const A = map.addrBits;
  const WA = A - 2;
  const m = new ModuleBuilder(
    name,
    `${map.doc}\n` +
      `AXI4-Lite slave, ${WORD_BITS}-bit data, ${A}-bit byte address; register map ${map.name} v${map.version.major}.${map.version.minor}\n` +
      '(register-map.md). A write of a port\'s COMMIT register sends its staged fields with the commit value on\n' +
      '<prefix>_valid until <prefix>_ready; writes to a port wait while it is busy. SLVERR: write to a read-only\n' +
      'register, or a commit value beyond the capabilities (nothing sent). DECERR: unmapped address.',
    { ...params, addrBits: A, version: `${map.version.major}.${map.version.minor}` },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const ag = `AXI4-Lite slave (s_axil): ${WORD_BITS}-bit data, ${A}-bit byte address`;
  const s = {
    awaddr: m.input('s_axil_awaddr', A, { group: ag }),
    awprot: m.input('s_axil_awprot', 3, { group: ag }),
    awvalid: m.input('s_axil_awvalid', 1, { group: ag }),
    awready: m.output('s_axil_awready', 1, { group: ag }),
    wdata: m.input('s_axil_wdata', WORD_BITS, { group: ag }),
    wstrb: m.input('s_axil_wstrb', WORD_BYTES, { group: ag }),
    wvalid: m.input('s_axil_wvalid', 1, { group: ag }),
    wready: m.output('s_axil_wready', 1, { group: ag }),
    bresp: m.output('s_axil_bresp', 2, { group: ag, doc: '0 OKAY, 2 SLVERR, 3 DECERR' }),
    bvalid: m.output('s_axil_bvalid', 1, { group: ag }),
    bready: m.input('s_axil_bready', 1, { group: ag }),
    araddr: m.input('s_axil_araddr', A, { group: ag }),
    arprot: m.input('s_axil_arprot', 3, { group: ag }),
    arvalid: m.input('s_axil_arvalid', 1, { group: ag }),
    arready: m.output('s_axil_arready', 1, { group: ag }),
    rdata: m.output('s_axil_rdata', WORD_BITS, { group: ag }),
    rresp: m.output('s_axil_rresp', 2, { group: ag, doc: '0 OKAY, 3 DECERR' }),
    rvalid: m.output('s_axil_rvalid', 1, { group: ag }),
    rready: m.input('s_axil_rready', 1, { group: ag }),
  };
  m.allowUnused(s.awprot, 'every access is allowed');
  m.allowUnused(s.arprot, 'every access is allowed');
  m.allowUnused(s.awaddr, 'bits [1:0]: registers are words, the octets written are wstrb\'s');
  m.allowUnused(s.araddr, 'bits [1:0]: registers are words');
  const RESP = {
    OKAY: m.constant('RESP_OKAY', 2, AXI_RESP.OKAY, 'AXI4 response OKAY'),
    SLVERR: m.constant('RESP_SLVERR', 2, AXI_RESP.SLVERR, 'AXI4 response SLVERR: write to a read-only register, or a refused commit'),
    DECERR: m.constant('RESP_DECERR', 2, AXI_RESP.DECERR, 'AXI4 response DECERR: no register at the address'),
  };
  /** Each register's word address, a named constant (REG_<NAME>). */
  const word = new Map<string, Expr>(map.registers.map((r) => [r.name, m.constant(`REG_${r.name}`, WA, r.offset / WORD_BYTES, `${hex(r.offset)}: ${r.doc}`)]));

  // ---- the staged ports: a register per staged field, the commit value, the handshake ------------
  interface PortState {
    readonly fields: ReadonlyMap<string, Signal>;
    readonly commit: Signal;
    readonly pending: Signal;
    readonly ready: Signal;
    /** Word addresses of its registers: REG_<P>_COMMIT .. the last field's. */
    readonly lo: Expr;
    readonly hi: Expr;
  }
  const ports = new Map<string, PortState>();
  for (const p of map.ports) {
    const g = `${p.name.toUpperCase()} port to the top (${p.prefix}_*): the ${p.name.toUpperCase()}_* registers, sent by a write of ${p.commitRegister.name}`;
    const valid = m.output(`${p.prefix}_valid`, 1, { group: g });
    const ready = m.input(`${p.prefix}_ready`, 1, { group: g });
    const commit = m.reg(`${p.name}_commit`, p.commit.width, { reset: 0, doc: `the last value committed to ${p.commitRegister.name}`, record: p.commit });
    const pending = m.reg(`${p.name}_pending`, 1, { reset: 0, doc: `${p.prefix}_valid: a commit waits for ${p.prefix}_ready` });
    m.assign(valid, pending);
    const fields = new Map<string, Signal>();
    const inLayout = new Set(p.layout.fields.map((f) => f.name));
    // The commit's fields beside the layout first (the QP), then the layout's, in its order.
    for (const cf of p.commit.fields.filter((f) => !inLayout.has(f.name))) {
      m.assign(m.output(`${p.prefix}_${cf.name}`, cf.width, { group: g, ...(cf.doc && { doc: cf.doc }) }), p.commit.get(commit, cf.name));
    }
    for (const f of p.layout.fields) {
      const out = m.output(`${p.prefix}_${f.name}`, f.width, { group: g, ...(f.doc && { doc: f.doc }) });
      if (p.staged.includes(f.name)) {
        const r = m.reg(`${p.name}_${f.name}`, f.width, { reset: 0, doc: `staged ${p.name} ${f.name}` });
        fields.set(f.name, r);
        m.assign(out, r);
      } else m.assign(out, p.commit.get(commit, f.name));
    }
    const regs = [p.commitRegister, ...p.staged.flatMap((f) => p.fieldRegisters.get(f)!)];
    const first = Math.min(...regs.map((r) => r.offset)) / WORD_BYTES;
    const last = Math.max(...regs.map((r) => r.offset)) / WORD_BYTES;
    if (regs.length !== last - first + 1) throw new Error(`internal: port ${p.name}'s registers are not contiguous`);
    const P = p.name.toUpperCase();
    const lo = m.constant(`${P}_FIRST`, WA, first, `first word of the ${P} port`);
    const hi = m.constant(`${P}_LAST`, WA, last, `last word of the ${P} port`);
    ports.set(p.name, { fields, commit, pending, ready, lo, hi });
  }

  // ---- status -------------------------------------------------------------------------------------
  const statusValue = (): Expr => {
    if (!map.status) return lit(WORD_BITS, 0);
    const layout = map.status.layout;
    const values: Record<string, Expr> = {};
    for (const f of layout.fields) {
      const hit = /^(.*)_(busy|ready)$/.exec(f.name);
      const p = hit ? ports.get(hit[1]!) : undefined;
      if (!p || f.width !== 1) throw new Error(`internal: status field ${f.name} names no port's busy or ready bit`);
      values[f.name] = hit![2] === 'busy' ? p.pending : p.ready;
    }
    return m.let('status_word', layout.pack(values), { doc: 'the STATUS register', record: layout }).zext(WORD_BITS);
  };
  const status = statusValue();

  // ---- write channel --------------------------------------------------------------------------------
  const awHeld = m.reg('aw_held', 1, { reset: 0, doc: 'a write address is held (awready is 0)' });
  const awWord = m.reg('aw_word', WA, { reset: 0, doc: 'its word address' });
  const wHeld = m.reg('w_held', 1, { reset: 0, doc: 'write data is held (wready is 0)' });
  const wData = m.reg('w_data', WORD_BITS, { reset: 0, doc: 'the held write data' });
  const wStrb = m.reg('w_strb', WORD_BYTES, { reset: 0, doc: 'its octet strobes' });
  const bValid = m.reg('b_valid', 1, { reset: 0, doc: 'a write response waits for bready' });
  const bResp = m.reg('b_resp', 2, { reset: 0, doc: 'its code' });
  m.assign(s.awready, awHeld.not());
  m.assign(s.wready, wHeld.not());
  m.assign(s.bvalid, bValid);
  m.assign(s.bresp, bResp);
  // Which port the held write is to, decoded as the address is taken: the wait is then one gate.
  const awIn = m.let('aw_in_word', s.awaddr.slice(A - 1, 2), { doc: 'the word address offered' });
  const awPort = new Map([...ports].map(([n, p]) => [n, { reg: m.reg(`aw_to_${n}`, 1, { reset: 0, doc: `the held write is to a register of the ${n} port` }), hit: awIn.ge(p.lo).and(awIn.le(p.hi)) }] as const));
  const portBusy = [...ports].map(([n, p]) => m.let(`${n}_write_waits`, awPort.get(n)!.reg.and(p.pending), { doc: `the held write is to the ${n} port while it is busy` }));
  const waits = portBusy.map((x): Expr => x).reduce((a, b) => a.or(b));
  const wrGo = m.let('wr_go', awHeld.and(wHeld).and(bValid.not()).and(waits.not()), { doc: 'the held write is done now' });
  const wMask = m.let('w_mask', cat(...[...Array(WORD_BYTES).keys()].reverse().map((i) => wStrb.bit(i).repeat(8))), { doc: 'wstrb, octet by octet' });
  /** A word after the held write: the strobed octets of w_data, the others of `old`. */
  const merged = (old: Expr): Expr => old.and(wMask.not()).or(wData.and(wMask));
  /** `reg` with bits [lo + part.width - 1 : lo] replaced by `part`. */
  const replace = (reg: Signal, lo: number, part: Expr): Expr => {
    const hi = lo + part.width;
    return cat(...[...(hi < reg.width ? [reg.slice(reg.width - 1, hi)] : []), part, ...(lo > 0 ? [reg.slice(lo - 1, 0)] : [])]);
  };
  /** Each commit register after the held write, and whether that value is one the port takes. */
  const commitWrite = new Map(
    map.ports.map((p) => {
      const value = m.let(`${p.name}_commit_write`, merged(ports.get(p.name)!.commit.zext(WORD_BITS)), { doc: `${p.commitRegister.name} after the held write` });
      const inRange = p.limit >= 1n << BigInt(WORD_BITS) ? lit(1, 1) : m.let(`${p.name}_commit_ok`, value.lt(lit(WORD_BITS, p.limit)), { doc: `below ${p.limit}: the port takes it` });
      return [p.name, { value, inRange }] as const;
    }),
  );
  const writeCase = (r: Register): readonly [CaseLabel, () => void] => [
    word.get(r.name)!,
    () => {
      const role = r.role;
      if (role.kind === 'constant' || role.kind === 'status') m.set(bResp, RESP.SLVERR);
      else if (role.kind === 'staged') {
        const reg = ports.get(role.port)!.fields.get(role.field)!;
        const part = r.fields[0]!;
        const old = reg.slice(part.fieldLo + part.width - 1, part.fieldLo).zext(WORD_BITS);
        m.set(reg, replace(reg, part.fieldLo, merged(old).slice(part.width - 1, 0)));
        m.set(bResp, RESP.OKAY);
      } else {
        const p = map.ports.find((x) => x.name === role.port)!;
        const st = ports.get(role.port)!;
        const { value, inRange } = commitWrite.get(role.port)!;
        m.when(
          inRange,
          () => {
            m.set(st.commit, value.slice(p.commit.width - 1, 0));
            m.set(st.pending, 1);
            m.set(bResp, RESP.OKAY);
          },
          () => m.set(bResp, RESP.SLVERR),
        );
      }
    },
  ];
  m.sync(() => {
    m.when(s.awvalid.and(awHeld.not()), () => {
      m.set(awHeld, 1);
      m.set(awWord, awIn);
      for (const { reg, hit } of awPort.values()) m.set(reg, hit);
    });
    m.when(s.wvalid.and(wHeld.not()), () => {
      m.set(wHeld, 1);
      m.set(wData, s.wdata);
      m.set(wStrb, s.wstrb);
    });
    m.when(bValid.and(s.bready), () => m.set(bValid, 0));
    for (const st of ports.values()) m.when(st.pending.and(st.ready), () => m.set(st.pending, 0));
    m.when(wrGo, () => {
      m.set(awHeld, 0);
      m.set(wHeld, 0);
      m.set(bValid, 1);
      m.switch(awWord, map.registers.map(writeCase), () => m.set(bResp, RESP.DECERR));
    });
  });

  // ---- read channel: the address is taken into a register, the word read from it the next cycle --
  // (two cycles a read: the register mux starts from a flip-flop, not from araddr).
  const arHeld = m.reg('ar_held', 1, { reset: 0, doc: 'a read address is held' });
  const arWord = m.reg('ar_word', WA, { reset: 0, doc: 'its word address' });
  const rValid = m.reg('r_valid', 1, { reset: 0, doc: 'a read response waits for rready' });
  const rData = m.reg('r_data', WORD_BITS, { reset: 0, doc: 'its data' });
  const rResp = m.reg('r_resp', 2, { reset: 0, doc: 'its code' });
  m.assign(s.arready, arHeld.not().and(rValid.not()));
  m.assign(s.rvalid, rValid);
  m.assign(s.rdata, rData);
  m.assign(s.rresp, rResp);
  const rdData = m.wire('rd_data', WORD_BITS, { doc: 'the word at ar_word' });
  const rdResp = m.wire('rd_resp', 2, { doc: 'OKAY, or DECERR where no register is' });
  const readValue = (r: Register): Expr => {
    const role = r.role;
    if (role.kind === 'constant') return lit(WORD_BITS, role.value);
    if (role.kind === 'status') return status;
    if (role.kind === 'commit') return ports.get(role.port)!.commit.zext(WORD_BITS);
    const reg = ports.get(role.port)!.fields.get(role.field)!;
    const part = r.fields[0]!;
    return reg.slice(part.fieldLo + part.width - 1, part.fieldLo).zext(WORD_BITS);
  };
  m.comb(() => {
    m.set(rdData, lit(WORD_BITS, 0));
    m.set(rdResp, RESP.OKAY);
    m.switch(
      arWord,
      map.registers.map((r) => [word.get(r.name)!, () => m.set(rdData, readValue(r))] as const),
      () => m.set(rdResp, RESP.DECERR),
    );
  });
  m.sync(() => {
    m.when(s.arvalid.and(arHeld.not()).and(rValid.not()), () => {
      m.set(arHeld, 1);
      m.set(arWord, s.araddr.slice(A - 1, 2));
    });
    m.when(arHeld, () => {
      m.set(arHeld, 0);
      m.set(rValid, 1);
      m.set(rData, rdData);
      m.set(rResp, rdResp);
    });
    m.when(rValid.and(s.rready), () => m.set(rValid, 0));
  });
  return m.build();
}

const hex = (n: number): string => `0x${n.toString(16).toUpperCase().padStart(3, '0')}`;
