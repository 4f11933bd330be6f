import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { record } from '../../hdl-gen/lib/record';
import { random } from '../../sim/cocotb/pause';
import { RecordGroup, camelCase, snakeCase, type PortListEntry, type Sampled } from '../../sim/cocotb/record-group';
import { Testbench } from '../../sim/cocotb/testbench';
import { RecordSink } from '../../sim/cocotb/record-sink';
import { RecordSource } from '../../sim/cocotb/record-source';
import { buildModel, type CompiledModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { withSeed } from '../support/random';
import { recordSliceBuild } from './fixtures';

/** The error code of the fixture's `err` port, as the manifest would list its record. */
const ERR = record('error_code', { layer: 2, etype: 4, code: 8 });
const PORTS: PortListEntry[] = ['s_req_err', 'm_rsp_err'].map((name) => ({ name, record: { name: ERR.name, fields: ERR.fields.map((f) => ({ name: f.name, lo: f.lo, width: f.width })) } }));

interface Req {
  readonly kind: number;
  readonly len: number;
  readonly addr: bigint;
  readonly err: { readonly layer: number; readonly etype: number; readonly code: number };
}

describe('record drivers on a valid/ready interface (record_slice)', () => {
  let compiled: CompiledModel;
  let tb: Testbench | undefined;
  beforeAll(() => {
    compiled = buildModel(recordSliceBuild());
  });
  afterEach(() => tb?.close());

  test('port suffixes and TypeScript names map both ways', () => {
    expect(snakeCase('addSwapMask')).toBe('add_swap_mask');
    expect(snakeCase('rxS0')).toBe('rx_s0');
    expect(camelCase('add_swap_mask')).toBe('addSwapMask');
    expect(camelCase('rx_s0')).toBe('rxS0');
  });

  test('records from objects come out in order under gaps and back-pressure, the record field encoded and decoded by its layout', () =>
    withSeed(0x5ec0, (r) => {
      tb = new Testbench(SimModel.open(compiled));
      const sent: Req[] = Array.from({ length: 300 }, () => ({ kind: r.int(0, 7), len: r.u32(), addr: r.u64(), err: { layer: r.int(0, 3), etype: r.int(0, 15), code: r.int(0, 255) } }));
      const violations: string[] = [];
      const source = tb.add(new RecordSource<Req>(tb.model, 's_req', { ports: PORTS, gap: random(r.u32(), 0.3), fields: (q) => ({ ...q }) }));
      const sink = tb.add(new RecordSink<Sampled>(tb.model, 'm_rsp', { ports: PORTS, pause: random(r.u32(), 0.4), stable: (v) => violations.push(v) }));
      source.push(...sent);
      tb.reset();
      tb.until(() => sink.records.length === sent.length, 20_000, 'every record');
      expect(violations).toEqual([]);
      expect(source.acceptedCount).toBe(sent.length);
      expect(sink.records).toEqual(sent.map((q) => ({ kind: q.kind, len: q.len, addr: q.addr, err: q.err })));
    }));

  test('the port list says which fields hold a record; a layout given by field name does the same', () => {
    tb = new Testbench(SimModel.open(compiled));
    const g = new RecordGroup(tb.model, 's_req', { records: { err: ERR } });
    g.poke({ err: { layer: 2, etype: 1, code: 0x45 } });
    expect(tb.model.peek('s_req_err')).toBe(ERR.encode({ layer: 2, etype: 1, code: 0x45 }));
    expect(() => new RecordGroup(tb!.model, 's_req').poke({ err: { code: 1 } })).toThrow(/s_req_err holds no record/);
  });

  test('a group checked against the layout its block declares: nested records from it, each difference named', () => {
    tb = new Testbench(SimModel.open(compiled));
    const REQ = record('request', { kind: 3, len: 32, addr: 64, err: ERR });
    const g = new RecordGroup(tb.model, 's_req', { layout: REQ });
    g.poke({ err: { layer: 1, etype: 2, code: 3 } });
    expect(tb.model.peek('s_req_err')).toBe(ERR.encode({ layer: 1, etype: 2, code: 3 }));
    const wide = record('request', { kind: 4, len: 32, addr: 64, err: ERR });
    expect(() => new RecordGroup(tb!.model, 's_req', { layout: wide })).toThrow(/s_req_kind is 3 bits, field kind of record request 4/);
    const more = record('request', { kind: 3, len: 32, addr: 64, err: ERR, qn: 32 });
    expect(() => new RecordGroup(tb!.model, 's_req', { layout: more })).toThrow(/no port s_req_qn for field qn of record request/);
    const fewer = record('request', { kind: 3, len: 32, err: ERR });
    expect(() => new RecordGroup(tb!.model, 's_req', { layout: fewer })).toThrow(/s_req_addr not in record request/);
    expect(() => new RecordGroup(tb!.model, 's_req', { layout: fewer, beside: ['addr'] })).not.toThrow();
  });

  test('a field the module does not have is an error naming the port; noise is cut to each port', () => {
    tb = new Testbench(SimModel.open(compiled));
    const g = new RecordGroup(tb.model, 's_req');
    expect(g.fields.map((f) => f.name)).toEqual(['kind', 'len', 'addr', 'err']);
    expect(() => g.poke({ size: 1 })).toThrow(/record_slice has no port s_req_size for field 'size'/);
    // All ones: the 3-bit and 14-bit ports take their width of them, not a whole octet's.
    g.poke(g.random({ bytes: (n: number) => new Uint8Array(n).fill(0xff) }, ['kind', 'err']));
    expect(tb.model.peek('s_req_kind')).toBe(7n);
    expect(tb.model.peek('s_req_err')).toBe((1n << 14n) - 1n);
    expect(() => new RecordGroup(tb!.model, 'x_req')).toThrow(/no input ports x_req_\*/);
  });
});

describe('AXI4-Stream TID apart from tuser (record_slice passthrough)', () => {
  let compiled: CompiledModel;
  beforeAll(() => {
    compiled = buildModel(recordSliceBuild());
  });

  test('every frame keeps its tid and its tuser', () =>
    withSeed(0x71d, (r) => {
      const tb = new Testbench(SimModel.open(compiled));
      try {
        const source = tb.source('s_axis', { pause: random(r.u32(), 0.2) });
        const sink = tb.sink('m_axis', { pause: random(r.u32(), 0.2) });
        const sent = Array.from({ length: 200 }, () => ({ data: r.bytes(r.int(1, 40)), tuser: r.int(0, 1), tid: r.int(0, 15) }));
        for (const f of sent) source.send(f.data, { tuser: f.tuser, tid: f.tid });
        tb.reset();
        tb.until(() => sink.available === sent.length, 20_000, 'every frame');
        expect(sink.drain().map((f) => ({ data: Buffer.from(f.data).toString('hex'), tuser: f.tuser, tid: f.tid }))).toEqual(sent.map((f) => ({ data: Buffer.from(f.data).toString('hex'), tuser: f.tuser, tid: f.tid })));
        expect(() => source.send(new Uint8Array(1), { tid: 16 })).toThrow(/s_axis_tid \(4 bits\)/);
      } finally {
        tb.close();
      }
    }));
});
