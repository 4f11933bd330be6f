import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { MpaFramer } from '../../ts-model/mpa';
import { encodeDdpSegment } from '../../ts-model/ddp/header';
import { encodeTerminate } from '../../ts-model/rdmap/headers';
import { rdmapControl, Opcode } from '../../ts-model/rdmap/constants';
import { fpduFields, type TraceRecord } from '../../sim/cosim/trace';
import { diffTraces, formatDiff, type Located } from '../../sim/cosim/trace-diff';

const ROOT = new URL('../../', import.meta.url).pathname;
const at = (rs: TraceRecord[]): Located[] => rs.map((r, i) => ({ line: i + 2, r }));
const out = (qp: number, op: string, msn: number, cycle?: number): TraceRecord => ({ t: 'fpdu', qp, dir: 'out', seq: msn * 100, op, msn, ...(cycle !== undefined && { cycle }) });

describe('rnic diff: the first divergence of two transaction traces', () => {
  test('equal traces, with cycles on one side only, have no divergence', () => {
    const model = [out(1, 'Send', 1), { t: 'completion', qp: 1, entry: 'recv length=4 se=0 inv=-' } as TraceRecord];
    const rtl = [out(1, 'Send', 1, 40), { t: 'completion', qp: 1, entry: 'recv length=4 se=0 inv=-', cycle: 90 } as TraceRecord];
    const d = diffTraces(at(model), at(rtl));
    expect(d.first).toBeNull();
    expect(formatDiff(d, { a: 'm', b: 'r' })).toMatch(/^no divergence: 2 and 2 records/);
  });

  test('responses and work-request traffic are separate queues: their interleaving is not a divergence', () => {
    const a = [out(3, 'RDMA Write', 1), out(3, 'RDMA Read Response', 1), out(3, 'Send', 2)];
    const b = [out(3, 'RDMA Read Response', 1), out(3, 'RDMA Write', 1), out(3, 'Send', 2)];
    expect(diffTraces(at(a), at(b)).first).toBeNull();
    // Within one queue the order is the message order: a swap is a divergence.
    const c = [out(3, 'Send', 2), out(3, 'RDMA Write', 1), out(3, 'RDMA Read Response', 1)];
    expect(diffTraces(at(a), at(c)).first?.channel).toBe('QP 3, FPDUs out (requests)');
  });

  test('names the earliest differing record, its fields and cycle, with the records before it', () => {
    const a = [out(0, 'Send', 1), out(0, 'Send', 2), out(0, 'Send', 3), out(5, 'Send', 1)];
    const b = [out(0, 'Send', 1, 10), out(0, 'Send', 2, 20), out(0, 'Send', 4, 30), out(5, 'Send', 9, 5)];
    const d = diffTraces(at(a), at(b));
    expect(d.first).toMatchObject({ channel: 'QP 0, FPDUs out (requests)', index: 2, fields: ['seq', 'msn'] });
    expect(d.differing).toBe(2);
    const text = formatDiff(d, { a: 'model', b: 'rtl' }, { a: 'model', b: 'rtl' });
    expect(text).toMatch(/^first divergence: QP 0, FPDUs out \(requests\), record 2 at cycle 30 \(model:4, rtl:4\)/);
    expect(text).toMatch(/\* +msn +3 +\| 4/);
    expect(text).toMatch(/model:3 \(rtl cycle 20\)/);
    expect(text).toMatch(/2 of 2 channels differ; this is the earliest/);
  });

  test('a record one side lacks is a divergence; cycles count only when asked', () => {
    const d = diffTraces(at([out(2, 'Send', 1)]), at([out(2, 'Send', 1, 7), out(2, 'Send', 2, 9)]));
    expect(d.first).toMatchObject({ index: 1, a: null });
    expect(diffTraces(at([out(2, 'Send', 1, 7)]), at([out(2, 'Send', 1, 8)])).first).toBeNull();
    expect(diffTraces(at([out(2, 'Send', 1, 7)]), at([out(2, 'Send', 1, 8)]), { cycles: true }).first?.fields).toEqual(['cycle']);
  });

  test('an FPDU record carries the DDP header, the Terminate code and the CRC', () => {
    const framer = new MpaFramer({ s0: 1000, seq: 1000, markers: true, crc: true });
    const term = encodeDdpSegment(
      { tagged: false, last: true, dv: 1, rsvdUlp: rdmapControl(Opcode.TERMINATE), rsvdUlp2: 0, qn: 2, msn: 7, mo: 0 },
      encodeTerminate({ layer: 1, etype: 1, code: 2, m: false, d: false, r: false, segmentLength: 0, ddpHeader: null, rdmaHeader: null }),
    );
    const f = framer.frame(term);
    const r = fpduFields(f.wire, term, true);
    expect(r).toMatchObject({ len: f.wire.length, ulpdu: term.length, op: 'Terminate', ddp: 'UL', qn: 2, msn: 7, terminate: '0x1/0x1/0x02' });
    expect(r.crc).toBe(Buffer.from(f.wire.subarray(f.wire.length - 4)).toString('hex'));
    expect(fpduFields(f.wire, null, true)).toMatchObject({ mpa: 'did not deframe' });
  });

  describe('the command', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rnic-diff-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });
    const write = (name: string, rs: TraceRecord[]) => {
      const f = join(dir, name);
      writeFileSync(f, [{ t: 'meta', side: name, module: 'rnic_top_w8', seed: 1 }, ...rs].map((r) => JSON.stringify(r)).join('\n') + '\n');
      return f;
    };

    test('exit status 0 when equal, 1 at a divergence; --json', () => {
      const a = write('a.jsonl', [out(1, 'Send', 1)]);
      const b = write('b.jsonl', [out(1, 'Send', 2, 33)]);
      expect(rnic('diff', a, a).status).toBe(0);
      const p = rnic('diff', a, b, '--json');
      expect(p.status).toBe(1);
      expect(JSON.parse(p.stdout).first).toMatchObject({ channel: 'QP 1, FPDUs out (requests)', index: 0, fields: ['seq', 'msn'] });
    });

    test('a file that is not a trace is named, with its line; a missing operand is a usage error', () => {
      const bad = join(dir, 'bad.jsonl');
      writeFileSync(bad, '{"t":"meta"}\nnot json\n');
      const p = rnic('diff', bad, bad);
      expect(p.status).toBe(2);
      expect(p.stderr).toMatch(/bad\.jsonl:2: not a JSON object/);
      expect(p.stderr).not.toMatch(/at .*\.ts:\d+/);
      const one = rnic('diff', bad);
      expect(one.status).toBe(2);
      expect(one.stderr).toMatch(/two trace files are needed/);
      expect(rnic('diff', join(dir, 'none.jsonl'), bad).stderr).toMatch(/none\.jsonl: cannot read it \(ENOENT\)/);
    });
  });
});
