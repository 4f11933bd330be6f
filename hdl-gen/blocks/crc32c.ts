import { CRC32C, type CrcParams } from '../../ts-model/crc32c';
import { cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { crcPipeline } from '../lib/crc';
import { pipelineRegister } from '../lib/stage';

/**
 * CRC-32C of AXI4-Stream frames at one beat per cycle, for a datapath of `bytes` octets
 * (RFC 5044's CRC; spec/mpa.md §3): the library's CRC component (hdl-gen/lib/crc.ts) behind an
 * AXI4-Stream interface. A beat carries k = 0..W valid octets in lanes 0..k−1 (tkeep = 2^k − 1, on
 * any beat); every matrix comes from the model's parameter object (ts-model/crc32c).
 *
 * Output: one transfer per frame on m_axis, tdata = the CRC value (the integer of spec/mpa.md §3.1;
 * the wire sends it least-significant octet first), tuser = 1 if any beat of the frame had a
 * tkeep that is not 2^k − 1 (that frame's CRC is then meaningless). The CRC of a frame leaves
 * five cycles after its last beat was taken (the component's latency, and the output skid buffer);
 * the input stalls only while the output waits for m_axis_tready.
 */
export function crc32cModule(bytes: number, params: CrcParams = CRC32C): Module {
  if (!Number.isInteger(bytes) || bytes < 1 || (bytes & (bytes - 1)) !== 0) throw new RangeError(`CRC datapath width must be a power of two, got ${bytes}`);
  const W = bytes;
  const name = `crc32c_w${W}`;
  const m = new ModuleBuilder(
    name,
    `CRC-32C (Castagnoli, poly 0x${params.poly.toString(16)} reflected) of AXI4-Stream frames,\n` +
      `${W} octets per beat, one beat per cycle, any tkeep of the form 2^k - 1 on any beat.\n` +
      'RFC 5044 FPDU CRC (spec/mpa.md section 3). m_axis_tdata is the CRC value of each frame;\n' +
      'm_axis_tuser flags a frame that had a non-contiguous tkeep.',
    { bytes: W, poly: `0x${params.poly.toString(16)}`, init: `0x${params.init.toString(16)}`, xorout: `0x${params.xorOut.toString(16)}` },
  );
  const clk = m.input('clk', 1, { group: 'Clock and synchronous active-high reset' });
  const rst = m.input('rst', 1, { group: 'Clock and synchronous active-high reset' });
  m.clockDomain('sync', clk, rst);
  const s = sinkStream({ bytes: W }).declare(m);
  const o = sourceStream({ bytes: 4, keep: false, last: false, user: 1 }).declare(m);

  // The output is a skid buffer, so its ready is a register: the pipeline's clock enable (advance)
  // never depends on m_axis_tready combinationally.
  const advance = m.wire('advance', 1, { doc: 'every stage of the CRC pipeline moves this cycle' });
  m.assign(s.ready, advance);
  const take = m.let('take', s.valid.and(advance));
  const inFrame = m.reg('in_frame', 1, { reset: 0, doc: 'a frame has begun and not ended' });

  const keep = s.keep!;
  // tkeep = 2^k − 1: no lane valid above a lane that is not (no carry chain, unlike tkeep & (tkeep + 1)).
  const keepOk = m.let('keep_ok', W === 1 ? lit(1, 1) : Array.from({ length: W - 1 }, (_, i) => keep.bit(i + 1).not().or(keep.bit(i))).reduce((a, b) => a.and(b)));
  const top = Array.from({ length: W }, (_, i) => (i === W - 1 ? keep.bit(i) : keep.bit(i).and(keep.bit(i + 1).not())));
  // k as a one-hot: bit 0 no lane valid, bit i + 1 lane i the top valid one.
  const oneHot = m.let('keep_count_onehot', cat(...[keep.bit(0).not(), ...top].reverse()), { doc: 'bit k: the beat has k valid octets' });
  const crc = crcPipeline(m, 'crc', { params, bytes: W, unit: 1, inputRegister: true, advance }, {
    valid: take,
    data: s.data,
    count: { oneHot },
    start: inFrame.not(),
    tag: cat(keepOk.not(), s.last!),
  });
  const tagLast = crc.tag!.bit(0);
  const tagBad = crc.tag!.bit(1);
  const frameErr = m.reg('frame_err', 1, { reset: 0, doc: 'a beat of this frame (already out of the pipeline) had a non-contiguous tkeep' });
  const done = crc.valid.and(tagLast);
  const out = pipelineRegister(m, 'out', { valid: done, data: cat(frameErr.or(tagBad), crc.crc.xor(params.xorOut >>> 0)) }, { skid: true, doc: 'a frame\'s CRC and error flag' });
  m.assign(advance, out.ready);
  m.sync(() => {
    m.when(take, () => m.set(inFrame, s.last!.not()));
    m.when(advance.and(crc.valid), () => m.set(frameErr, mux(tagLast, lit(1, 0), frameErr.or(tagBad))));
  });
  m.assign(o.data, out.out.data.slice(31, 0));
  m.assign(o.user!, out.out.data.bit(32));
  m.assign(o.valid, out.out.valid);
  m.assign(out.out.ready, o.ready);
  return m.build();
}
