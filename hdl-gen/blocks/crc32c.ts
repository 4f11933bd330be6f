import { CRC32C, type CrcParams } from '../../ts-model/crc32c';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream, sourceStream } from '../core/stream';
import { crcBeat } from './crc-beat';

/**
 * CRC-32C of AXI4-Stream frames at one beat per cycle, for a datapath of `bytes` octets
 * (RFC 5044's CRC; spec/mpa.md §3). Every matrix comes from the model's parameter object
 * (ts-model/crc32c): no XOR table is written by hand.
 *
 * A beat carries k = 1..W valid octets in lanes 0..k−1 (tkeep = 2^k − 1, on any beat). Rather than
 * W matrix pairs, one per k, the beat is shifted up by j = W − k lanes and the CRC register first
 * moved j zero-octet steps backwards (Z^−j, Z = the one-octet state matrix, invertible because
 * x does not divide the polynomial): feeding j zero octets from that register gives back the
 * register, then the k octets follow, so the single W-octet matrix pair computes exactly the
 * k-octet update. Z^−j and the shift are log2(W) stages selected by the bits of j.
 *
 * Output: one transfer per frame on m_axis, tdata = the CRC value (the integer of spec/mpa.md §3.1;
 * the wire sends it least-significant octet first), tuser = 1 if any beat of the frame had a
 * tkeep that is not 2^k − 1 (that frame's CRC is then meaningless).
 */
export function crc32cModule(bytes: number, params: CrcParams = CRC32C): Module {
  if (!Number.isInteger(bytes) || bytes < 1 || (bytes & (bytes - 1)) !== 0) throw new RangeError(`CRC datapath width must be a power of two, got ${bytes}`);
  const W = bytes;
  const stages = Math.log2(W);
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

  const state = m.reg('crc_state', 32, { reset: params.init, doc: 'CRC register between the beats of a frame' });
  const frameErr = m.reg('frame_err', 1, { reset: 0, doc: 'a beat of this frame had a non-contiguous tkeep' });
  const outValid = m.reg('out_valid', 1, { reset: 0 });
  const outCrc = m.reg('out_crc', 32);
  const outErr = m.reg('out_err', 1);

  const keep = s.keep!;
  // tkeep = 2^k − 1 ⇔ tkeep & (tkeep + 1) = 0.
  const keepOk = m.let('keep_ok', keep.and(keep.add(1)).eq(0));
  const empty = m.let('keep_none', keep.eq(0));
  // j = W − k from the thermometer code: the top valid lane i gives k = i + 1.
  const top = Array.from({ length: W }, (_, i) => (i === W - 1 ? keep.bit(i) : keep.bit(i).and(keep.bit(i + 1).not())));
  const jBits: Expr[] = [];
  for (let b = 0; b < stages; b++) {
    const lanes = top.filter((_, i) => ((W - 1 - i) >> b) & 1);
    jBits.push(lanes.length ? lanes.reduce((a, x) => a.or(x)) : lit(1, 0));
  }
  const shift = stages ? m.let('shift_lanes', cat(...[...jBits].reverse())) : null;
  const next = crcBeat(m, 'crc', params, state, s.data, shift);

  const accept = m.let('accept', s.valid.and(s.ready));
  m.assign(s.ready, outValid.not().or(o.ready));
  m.assign(o.data, outCrc);
  m.assign(o.valid, outValid);
  m.assign(o.user!, outErr);

  // A beat with no octets (tkeep = 0, allowed on tlast) leaves the register as it is.
  const beat = m.let('crc_after_beat', mux(empty, state, next));
  const err = m.let('frame_err_after', frameErr.or(keepOk.not()));
  m.sync(() => {
    m.when(o.valid.and(o.ready), () => m.set(outValid, 0));
    m.when(accept, () => {
      m.when(
        s.last!,
        () => {
          m.set(outValid, 1);
          m.set(outCrc, beat.xor(params.xorOut >>> 0));
          m.set(outErr, err);
          m.set(state, params.init >>> 0);
          m.set(frameErr, 0);
        },
        () => {
          m.set(state, beat);
          m.set(frameErr, err);
        },
      );
    });
  });
  return m.build();
}
