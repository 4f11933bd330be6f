import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { segmentMessage, type DdpMessage } from '../../ts-model/ddp/segmenter';
import { MpaFramer } from '../../ts-model/mpa';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { prng } from '../../ts-model/util/prng';
import { never } from '../../sim/cocotb/pause';
import { RnicBench, openTop } from '../../sim/cosim/rnic-bench';
import type { LocalWr, RtlRegion } from '../../sim/cosim/rx-peer';
import { completionBeforeData, type WrittenSpan } from '../../sim/cosim/scoreboard';
import type { SimModel } from '../../sim/verilator/model';
import { immediate, plainQp } from '../support/top-fixtures';

/**
 * A completion reaches the host only once the data it completes is in host memory: a message is
 * delivered when all its segments and every earlier message are placed (RFC 5041 §5.3-5.4,
 * spec/ddp-rdmap.md §6.1), and a Send fences the Writes before it (RFC 5040 §5.5 rule 4). The
 * random co-simulation checks this for every completion (sim/cosim/rnic.ts, completionOrder);
 * here rnic_top's m_cq against its mem_wr for one message of each kind that completes with data,
 * the completion queue always ready (it takes an entry the cycle it is offered) and the memory's
 * write port free or paused half the time.
 */
const W = 8;
const QP = 3;
const PD = 5;
const c = plainQp({ pd: PD });
/** The Write target and the sink of the Read: remote and local write. */
const REGION: RtlRegion = { stag: 0x400, pd: PD, base: 0x6000_0000n, length: 16384n, access: ['remote-write', 'local-write'], va: false, invalidatable: false };
/** A posted receive buffer, off a beat boundary (the last beat of a segment spills: a flush beat). */
const BUFFER = 0x7000_0003n;
const rng = prng(11);
const payload = (n: number) => rng.bytes(n);

/** The RTL's write beats as octet spans (what the scoreboard compares). */
const spans = (bench: RnicBench): WrittenSpan[] =>
  bench.mem.writes.map((w) => {
    const lanes = [...Array(W).keys()].filter((j) => (w.strb >> BigInt(j)) & 1n);
    return { lo: w.addr + BigInt(lanes[0]!), hi: w.addr + BigInt(lanes[lanes.length - 1]!), cycle: w.cycle };
  });
/** The cycle of the last write into [addr, addr + len). */
const lastWrite = (bench: RnicBench, addr: bigint, len: number) => Math.max(...spans(bench).filter((s) => s.hi >= addr && s.lo < addr + BigInt(len)).map((s) => s.cycle));

describe('rnic_top_w8: a completion comes after the writes of the data it completes', () => {
  let model: SimModel;
  beforeAll(() => {
    model = openTop(W);
  });
  afterAll(() => model?.close());

  /**
   * A new connection on QP with the region and `buffers` posted receive buffers; `wrs` posted;
   * then the peer's `messages` in (MULPDU 1460: several segments each). Returns the completions
   * other than `sent`, and whether host memory held each message's data when the host took it.
   */
  function run(bp: number, buffers: number, messages: DdpMessage[], wrs: LocalWr[] = []) {
    const bench = new RnicBench(model, { r: prng(Math.round(bp * 100) + messages.length), backpressure: bp, noise: true });
    // The host takes every completion the cycle it is offered: nothing hides an early one.
    bench.cqSink.setPause(never());
    bench.start([{ qp: QP, c }], [REGION]);
    for (let i = 0; i < buffers; i++) bench.recv.push({ qp: QP, addr: BUFFER + BigInt(i) * 0x10000n, len: 8192 });
    for (const w of wrs) bench.post(QP, w);
    bench.settle('the work requests');
    bench.mAxis.drain();
    // What the host would see when it takes a completion: each message's data in place or not.
    const places = (g: DdpMessage) => g.tagged || (g.rsvdUlp & 0xf) === Opcode.SEND;
    const want = messages.filter(places).map((g) => ({ addr: g.tagged ? REGION.base + g.to : BUFFER, data: g.payload }));
    const seen = new Map<number, boolean>();
    const [valid, ready] = [model.handle('m_cq_valid'), model.handle('m_cq_ready')];
    bench.add({
      sample: () => {
        if (model.peekPreNumber(valid) === 1 && model.peekPreNumber(ready) === 1) seen.set(model.cycles, want.every((x) => Buffer.compare(bench.mem.memory.read(x.addr, x.data.length), x.data) === 0));
      },
    });
    const framer = new MpaFramer({ s0: c.rx.s0, seq: c.rx.seq, markers: c.rx.markers, crc: c.crc });
    for (const g of messages) for (const u of segmentMessage(g, c.mulpdu)) bench.sAxis.send(framer.frame(u).wire, { tid: QP });
    bench.settle('the peer\u2019s messages');
    const completions = bench.cq.filter((e) => !e.sent);
    return { bench, completions, seen: completions.map((e) => seen.get(e.cycle)) };
  }

  test.each([0, 0.5])('a Send of 3000 octets in three segments: its receive completion after the last write into the buffer (memory write pauses %s)', (bp) => {
    const data = payload(3000);
    const { bench, completions, seen } = run(bp, 1, [{ tagged: false, rsvdUlp: rdmapControl(Opcode.SEND), rsvdUlp2: 0, qn: 0, msn: 1, payload: data }]);
    expect(completions.map((e) => e.text)).toEqual(['recv length=3000 se=0 inv=-']);
    expect(completions[0]!.cycle).toBeGreaterThanOrEqual(lastWrite(bench, BUFFER, 3000));
    expect(seen).toEqual([true]);
  });

  test.each([0, 0.5])('an RDMA Write of 2000 octets, then Immediate Data: the Immediate\u2019s completion after the Write\u2019s last write (memory write pauses %s)', (bp) => {
    const data = payload(2000);
    const { bench, completions, seen } = run(bp, 1, [
      { tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: REGION.stag, to: 0x100n, payload: data },
      { tagged: false, rsvdUlp: rdmapControl(Opcode.IMMEDIATE), rsvdUlp2: 0, qn: 0, msn: 1, payload: new Uint8Array(8).fill(0x11) },
    ]);
    expect(completions.map((e) => e.text)).toEqual(['recv-immediate se=0 data=1111111111111111']);
    expect(completions[0]!.cycle).toBeGreaterThanOrEqual(lastWrite(bench, REGION.base + 0x100n, 2000));
    expect(seen).toEqual([true]);
  });

  test.each([0, 0.5])('a Read of 3000 octets: its completion after the last write of the Read Response (memory write pauses %s)', (bp) => {
    const data = payload(3000);
    const read: LocalWr = { wr: { kind: 'read', id: 1, stag: 0x900, to: 0n, length: 3000, localStag: REGION.stag, localTo: 0n }, addr: 0n, requestId: 0 };
    const { bench, completions, seen } = run(bp, 0, [{ tagged: true, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag: REGION.stag, to: 0n, payload: data }], [read]);
    expect(completions.map((e) => e.text)).toEqual(['read length=3000']);
    expect(completions[0]!.cycle).toBeGreaterThanOrEqual(lastWrite(bench, REGION.base, 3000));
    expect(seen).toEqual([true]);
  });
});

/**
 * m_cq keeps an entry it offers until the host takes it (valid/ready). The host holds m_cq_ready
 * low while an Immediate Data's `sent` completion waits and a peer's Send is placed: the Send's
 * completion, decided meanwhile, must go after it, not replace it on the bus. (Replacing it let
 * the AXI4 wrapper's write fence, which marks the writes before an entry when it appears, pass the
 * Send's completion before its data: found by `make regress` at 64 octets.)
 */
describe('rnic_top_w8: m_cq holds what it offers', () => {
  let model: SimModel;
  beforeAll(() => {
    model = openTop(W);
  });
  afterAll(() => model?.close());

  function cqHoldsItsEntry(bench: RnicBench): { readonly texts: string[]; readonly broken: string[] } {
    bench.start([{ qp: QP, c }], []);
    bench.cqSink.setPause({ next: () => true });
    bench.post(QP, immediate(1));
    const valid = bench.model.handle('m_cq_valid');
    bench.until(() => bench.model.peekNumber(valid) === 1, 20_000, "the Immediate Data's sent completion on m_cq");
    bench.recv.push({ qp: QP, addr: BUFFER, len: 2048 });
    const framer = new MpaFramer({ s0: c.rx.s0, seq: c.rx.seq, markers: c.rx.markers, crc: c.crc });
    const send: DdpMessage = { tagged: false, rsvdUlp: rdmapControl(Opcode.SEND), rsvdUlp2: 0, qn: 0, msn: 1, payload: prng(7).bytes(100) };
    for (const u of segmentMessage(send, c.mulpdu)) bench.sAxis.send(framer.frame(u).wire, { tid: QP });
    bench.run(2000);
    bench.cqSink.setPause(never());
    bench.until(() => bench.cq.length === 2, 20_000, 'both completions');
    return { texts: bench.cq.map((e) => e.text), broken: [...bench.broken] };
  }

  test("a Send's completion decided while a sent completion waits for the host goes after it; the entry offered never changes", () => {
    const r = cqHoldsItsEntry(new RnicBench(model, { r: prng(5) }));
    expect(r.broken).toEqual([]);
    expect(r.texts).toHaveLength(2);
    expect(r.texts[0]).toBe('sent');
    expect(r.texts[1]).toMatch(/^recv length=100/);
  });

  test('the check sees a top that switches m_cq to a newer event (a mutant: nothing held)', () => {
    const bench = RnicBench.open(W, { mutate: (v) => v.replace(/cq_held_next = m_cq_valid & \(~m_cq_ready\);/, "cq_held_next = 1'b0;") }, { r: prng(5) });
    try {
      const r = cqHoldsItsEntry(bench);
      expect(r.broken.join('\n')).toMatch(/m_cq: payload changed while waiting/);
      expect(r.texts[0]).toMatch(/^recv length=100/);
    } finally {
      bench.close();
    }
  });
});

describe('the scoreboard\u2019s completion-order check (completionBeforeData)', () => {
  const span = (lo: number, hi: number, cycle: number): WrittenSpan => ({ lo: BigInt(lo), hi: BigInt(hi), cycle });
  test('data written at or before the completion\u2019s cycle: in order (a write in the same edge is in memory when the host takes it)', () => {
    expect(completionBeforeData([{ addr: 100n, len: 20 }], [span(100, 109, 5), span(110, 119, 10)], 10)).toBeNull();
  });
  test('an octet written only after the completion: its address and the last write\u2019s cycle', () => {
    expect(completionBeforeData([{ addr: 100n, len: 20 }], [span(100, 109, 5), span(110, 115, 11), span(116, 119, 12)], 10)).toEqual({ addr: 110n, lastWrite: 12 });
  });
  test('a later message writing over data that was in place in time is no fault; an octet never written is the memory comparison\u2019s', () => {
    expect(completionBeforeData([{ addr: 100n, len: 20 }], [span(100, 119, 5), span(100, 119, 30)], 10)).toBeNull();
    expect(completionBeforeData([{ addr: 100n, len: 20 }], [span(100, 109, 5)], 10)).toBeNull();
  });
});
