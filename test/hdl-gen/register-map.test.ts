import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { rnicCfgAxilModule } from '../../hdl-gen/blocks/rnic-cfg-axil';
import { CFG_BASE, rnicRegisterMap } from '../../hdl-gen/blocks/rnic-regmap';
import { rnicTopAxilModule } from '../../hdl-gen/blocks/rnic-top-axil';
import { rnicTopModule } from '../../hdl-gen/blocks/rnic-top';
import { QP_CFG } from '../../hdl-gen/blocks/records';
import { stagCfgLayout, stagTableModule } from '../../hdl-gen/blocks/stag-table';
import { DEFAULT_CONFIG, parseConfig } from '../../hdl-gen/gen/config';
import { generate, registerMapFiles } from '../../hdl-gen/gen/generate';
import { WORD_BYTES, portWrites, registerAt } from '../../hdl-gen/lib/regmap';
import { setUpConnection } from '../../ts-model/mpa';
import { MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import { qpConfigFields, qpStartup } from '../../sim/cosim/qp-config';
import { negotiatedQpConfig, qpConfigWrites, stagEntryWrites } from '../../sim/host/axil-config';
import { plainQp } from '../support/top-fixtures';
import { verilatorLint } from '../support/rtl-checks';

/**
 * The AXI4-Lite register map (hdl-gen/blocks/rnic-regmap.ts): built from the records the top's
 * configuration ports are declared from, generated with the RTL (register-map.md / .json), the
 * committed docs/register-map.md equal to the generated one, and the host's write sequences
 * (sim/host/axil-config.ts) from the model's MPA negotiation.
 */
const map = rnicRegisterMap(DEFAULT_CONFIG);

describe('the register map', () => {
  test('every field of the QP context and of the STag entry has its registers; words do not overlap; all fit the address window', () => {
    const offsets = map.registers.map((r) => r.offset);
    expect(new Set(offsets).size).toBe(offsets.length);
    for (const o of offsets) expect(o % WORD_BYTES === 0 && o < 1 << map.addrBits).toBe(true);
    const qp = map.ports.find((p) => p.name === 'qp')!;
    expect(qp.layout).toBe(QP_CFG);
    expect(qp.staged).toEqual(QP_CFG.fields.map((f) => f.name));
    expect(qp.commitRegister.offset).toBe(CFG_BASE.qp);
    const stag = map.ports.find((p) => p.name === 'stag')!;
    expect(stag.staged).toEqual(stagCfgLayout(DEFAULT_CONFIG.stagDepth).fields.map((f) => f.name).filter((n) => n !== 'index' && n !== 'key'));
    // A field's words hold all of its bits, in order, least significant first.
    for (const p of map.ports) {
      for (const f of p.staged) {
        const parts = p.fieldRegisters.get(f)!.map((r) => r.fields[0]!);
        expect(parts.reduce((lo, x) => (expect(x.fieldLo).toBe(lo), lo + x.width), 0)).toBe(p.layout.field(f).width);
      }
    }
    expect(registerAt(map, CFG_BASE.stag + 3)!.name).toBe('STAG_COMMIT');
    expect(registerAt(map, 0xffc)).toBeNull();
  });

  test('the ports are the top\u2019s: rnic_cfg_axil drives exactly the configuration inputs of rnic_top, at their widths', () => {
    const top = rnicTopModule(8, 4, { stagDepth: 64 });
    const block = rnicCfgAxilModule({ width: 8, qps: 4, stagDepth: 64 });
    const toTop = block.ports.filter((p) => !p.name.startsWith('s_axil_') && p.name !== 'clk' && p.name !== 'rst');
    expect(toTop.length).toBe(2 * 2 + 1 + QP_CFG.fields.length + stagCfgLayout(64).fields.length);
    for (const p of toTop) {
      const t = top.ports.find((x) => x.name === p.name);
      expect(t, p.name).toBeDefined();
      expect([t!.width, t!.role === 'input' ? 'output' : 'input']).toEqual([p.width, p.role]);
    }
    // The STag table declares its write port from the same record.
    const table = stagTableModule(64);
    for (const f of stagCfgLayout(64).fields) expect(table.ports.find((x) => x.name === `cfg_${f.name}`)!.width).toBe(f.width);
    // Everything else of the top is a port of the wrapper.
    const wrapper = rnicTopAxilModule(8, 4, { stagDepth: 64 });
    const passed = top.ports.filter((p) => !toTop.some((x) => x.name === p.name)).map((p) => `${p.role} ${p.name} ${p.width}`);
    expect(wrapper.ports.filter((p) => !p.name.startsWith('s_axil_')).map((p) => `${p.role} ${p.name} ${p.width}`)).toEqual(passed);
  });

  test('rnic_cfg_axil is lint-clean under verilator -Wall at small and large configurations', () => {
    expect(verilatorLint(rnicCfgAxilModule({ width: 8, qps: 1, stagDepth: 16 }))).toBe('');
    expect(verilatorLint(rnicCfgAxilModule({ width: 64, qps: 16384, stagDepth: 65536 }))).toBe('');
  });

  test('the QP port\u2019s writes carry each field\u2019s value, and the commit the QP; the STag port\u2019s commit is the STag', () => {
    const c = plainQp({ pd: 0x1234, msn: 0xfffffffe, maxUlpdu: 9000, tx: { s0: 0x12345, seq: 0x12345 + 8, markers: true } });
    const ops = qpConfigWrites(map, 77, c);
    const value = (name: string) => (ops.find((o) => o.name === name) as { data: number }).data;
    expect(value('QP_PD')).toBe(0x1234);
    expect(value('QP_INITIAL_MSN')).toBe(0xfffffffe);
    expect(value('QP_MAX_ULPDU')).toBe(9000);
    expect(value('QP_TX_S0')).toBe(0x12345 & 0x1ff);
    expect(value('QP_TX_MARKERS')).toBe(1);
    expect(value('QP_COMMIT')).toBe(77);
    // The commit comes after every field, the poll of STATUS last.
    expect(ops.findIndex((o) => o.name === 'QP_COMMIT')).toBe(ops.length - 2);
    expect(ops.at(-1)).toMatchObject({ kind: 'poll', name: 'STATUS.qp_busy', value: 0 });
    const stag = stagEntryWrites(map, { stag: 0x000a_de17, pd: 3, base: 0x1_2345_6789n, length: 0x1_0000_0000n, access: ['remote-read'], va: true, invalidatable: false });
    const s = (name: string) => (stag.find((o) => o.name === name) as { data: number }).data;
    expect(s('STAG_COMMIT')).toBe(0x000a_de17);
    expect([s('STAG_BASE_LO'), s('STAG_BASE_HI'), s('STAG_LENGTH_LO'), s('STAG_LENGTH_HI')]).toEqual([0x2345_6789, 1, 0, 1]);
    expect(() => portWrites(map, 'qp', { qp: 1 }, { qp: 1 })).toThrow(/not a staged field/);
  });

  test('the host helper takes a QP\u2019s context from the model\u2019s MPA negotiation: the responder\u2019s side of an established connection', () => {
    const conn = setUpConnection({ initiator: { markers: true, crc: false, ird: 2, ord: 6 }, responder: { markers: false, crc: true, ird: 4, ord: 3 }, initiatorIsn: 0xfffffff0, responderIsn: 0x1000 });
    const p = { pd: 9, msn: 1, mulpdu: 1460, maxUlpdu: MAX_ULPDU_LENGTH, bigEndian: false, rfc7306: true };
    const rsp = negotiatedQpConfig(conn, 'responder', p);
    // CRC if either asks (spec/mpa.md §3.4); markers where the receiver asked (§4.2); the responder's ORD lowered to the initiator's IRD (RFC 6581 §9.1).
    expect(rsp).toMatchObject({ crc: true, ird: 4, ord: 2, fence: true, rx: { markers: false, s0: conn.initiatorToResponder.s0 }, tx: { markers: true, s0: conn.responderToInitiator.s0 } });
    expect(rsp.rx.seq).toBe(rsp.rx.s0);
    const ini = negotiatedQpConfig(conn, 'initiator', p);
    expect(ini).toMatchObject({ fence: false, rx: { markers: true }, tx: { markers: false }, ird: 2, ord: 4 });
    // The inverse of the benches' qpStartup: a QP's framing, negotiated and loaded back, is the same.
    const c = plainQp({ rx: { s0: 0x8000_0010, seq: 0x8000_0010, markers: true }, tx: { s0: 0x30, seq: 0x30, markers: false } });
    const again = negotiatedQpConfig(qpStartup(c), 'responder', p);
    expect([again.rx, again.tx, again.crc]).toEqual([c.rx, c.tx, c.crc]);
    expect(() => negotiatedQpConfig({ ...conn, status: 'rejected' }, 'responder', p)).toThrow(/rejected/);
  });
});

describe('register-map.md and register-map.json, generated with the RTL', () => {
  const files = new Map(registerMapFiles(DEFAULT_CONFIG).map((f) => [f.path, f.text]));

  test('rnic gen writes both beside the Verilog, and the top of rnic.f is the AXI4-Lite wrapper', () => {
    const gen = generate(parseConfig({ qps: 4, stagDepth: 64 }));
    expect(gen.map((f) => f.path)).toEqual(expect.arrayContaining(['register-map.md', 'register-map.json', 'rnic_cfg_axil_w8_q4_d64.v', 'rnic_top_axil_w8.v']));
    expect(gen.find((f) => f.path === 'rnic.f')!.text.trimEnd().split('\n').at(-1)).toBe('rnic_top_axil_w8.v');
  });

  test('the Markdown table has a row per register field, with offset, bits, access, reset, meaning and RFC section', () => {
    const md = files.get('register-map.md')!;
    expect(md).toContain('| offset | register | field | bits | access | reset | meaning | RFC section |');
    expect(md).toMatch(/\| 0x104 \| QP_PD \| pd \| \[15:0\] \| RW \| 0x0 \| the stream's protection domain \| RFC 5041/);
    expect(md).toMatch(/\| 0x20C \| STAG_BASE_HI \| base\[63:32\] \| \[31:0\] \| RW \|/);
    expect(md).toMatch(/\| 0x000 \| ID \| id \| \[31:0\] \| RO \| 0x524E4943 \|/);
    const rows = md.split('\n').filter((l) => /^\| (0x[0-9A-F]{3} \| [A-Z]|\| )/.test(l));
    expect(rows.length).toBe(map.registers.reduce((n, r) => n + r.fields.length, 0));
  });

  test('the JSON gives every register\u2019s offset and fields', () => {
    const json = JSON.parse(files.get('register-map.json')!) as { registers: { name: string; offset: number; fields: { name: string; lo: number; width: number }[] }[] };
    expect(json.registers.map((r) => [r.name, r.offset])).toEqual(map.registers.map((r) => [r.name, r.offset]));
    expect(json.registers.find((r) => r.name === 'STAG_COMMIT')!.fields).toMatchObject([{ name: 'key', lo: 0, width: 8 }, { name: 'index', lo: 8, width: 12 }]);
  });

  test('docs/register-map.md is the generated one (regenerate: make rtl && cp rtl/register-map.md docs/)', () => {
    const committed = readFileSync(new URL('../../docs/register-map.md', import.meta.url), 'utf8');
    expect(committed === files.get('register-map.md'), 'docs/register-map.md is stale: make rtl && cp rtl/register-map.md docs/').toBe(true);
  });

  test('the QP context fields the host writes are the configuration port\u2019s (qpConfigFields), one register each', () => {
    const fields = Object.keys(qpConfigFields(0, plainQp())).filter((k) => k !== 'qp');
    expect(fields.length).toBe(QP_CFG.fields.length);
  });
});
