import { bramFifo } from '../lib/fifo-bram';
import { thermometerCount } from '../lib/keep';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sinkStream } from '../core/stream';
import { checkRnicWidth } from './rnic-widths';

/**
 * The placement data mover of the receive path, for a datapath of W octets (8, 16, 32 or 64):
 * a store-and-forward payload FIFO and a realigning memory writer.
 *
 * s_axis takes the ULP data packets of ddp_rx_hdr_w<W> (m_axis there): lane 0 first, every beat
 * full but the last, whose tkeep is 2^k − 1 with k ≥ 1 (no empty packets). Only the count of the
 * last beat is kept; tkeep of the other beats is taken as all ones (the producer's contract).
 * s_axis_tready is "the FIFO has room", a flip-flop (bramFifo's registered full flag), so nothing
 * of this block is in front of the producer's handshake logic.
 *
 * s_cmd: one command per packet, in packet order, at any time before, during or after the
 * packet's beats arrive (the control decides after its header checks, so the packet waits in
 * the FIFO). discard = 1 drops the packet's beats and writes nothing; otherwise octet i of the
 * packet goes to host address addr + i (any alignment). The commands sit in a two-entry queue
 * (the active one and one pending); s_cmd_ready is "the pending slot is free".
 *
 * wr_*: write beats at W-aligned addresses, lane j = the octet at wr_addr + j, wr_strb ≠ 0, each
 * enabled octet inside [addr, addr + length) of its packet (length = the packet's octets as it
 * arrived: the command carries none, so this block trusts the producer's tlast). A packet at
 * addr ≡ off (mod W) is rotated up by off lanes: write beat k takes lanes [off, W) from input beat
 * k and lanes [0, off) from input beat k − 1 (the carry register); when the last beat spills past
 * lane W − off, one flush beat carries that spill alone (one write beat more than input beats).
 * Registered outputs, held while wr_ready is low; wr_ready reaches the internal enables
 * combinationally (no skid buffer) but no output.
 *
 * idle: no command accepted and unfinished (a command is finished when all its write beats have
 * been accepted, or all its beats dropped) and none held. It says nothing about packet beats
 * still waiting in the FIFO for their command.
 *
 * FIFO: fifoBytes / W beats of {last, valid octets − 1, data} in a memory written at the input
 * handshake and read through a registered read port (lib/fifo-bram.ts: the head register
 * `fifo_head`, one beat more than the memory; a read is issued whenever the head is empty or being
 * consumed, so the RAM latency costs no cycle per packet).
 * Caller's contract: no packet is longer than fifoBytes (fifoBytes ≥ the largest payload, e.g.
 * the MULPDU), else the FIFO fills before the packet's last beat, whose command never comes:
 * deadlock.
 *
 * Latency and rate (wr_ready = 1, command active or pending in time): an input beat accepted at
 * edge t is written (wr_valid & wr_ready) at edge t + 3. One input beat and one write beat per
 * cycle, back-to-back packets without a bubble when the addresses are W-aligned; an unaligned
 * packet whose last beat spills costs one cycle for its flush beat. Discarded packets drain one
 * beat per cycle, also while wr_ready is low.
 */
/** Edges from an input beat's handshake to its write beat's handshake, without back-pressure. */
export const DDP_RX_PLACE_LATENCY = 3;

/** Commands the block holds at once, taken and not finished: the active one and one pending. */
export const DDP_RX_PLACE_COMMANDS = 2;

/** `x` (W lanes of `unit` bits) rotated up by `k` lanes: lane L takes lane (L − k) mod W. */
const rotUp = (x: Expr, unit: number, W: number, k: number): Expr => cat(x.slice(unit * (W - k) - 1, 0), x.slice(unit * W - 1, unit * (W - k)));

export function ddpRxPlaceModule(bytes: number, fifoBytes = 8192): Module {
  checkRnicWidth('DDP RX placement', bytes);
  if (!Number.isInteger(fifoBytes) || fifoBytes < 4 * bytes || (fifoBytes & (fifoBytes - 1)) !== 0) {
    throw new RangeError(`DDP RX placement FIFO must be a power of two of at least ${4 * bytes} octets, got ${fifoBytes}`);
  }
  const W = bytes;
  const LW = Math.log2(W);
  const depth = fifoBytes / W;
  const EW = 8 * W + LW + 1;
  const m = new ModuleBuilder(
    `ddp_rx_place_w${W}`,
    `DDP receive placement: a ${fifoBytes}-octet store-and-forward FIFO for the ULP data packets of\n` +
      `ddp_rx_hdr and a realigning host-memory writer, ${W} octets per beat. One s_cmd per packet, in order:\n` +
      'discard, or write octet i of the packet to s_cmd_addr + i (any alignment). Writes at W-aligned\n' +
      'addresses with strobes; never an octet outside the packet. Rate: one beat per cycle, no bubble between\n' +
      'packets at aligned addresses; latency 3 edges from input to write handshake. No packet may be longer\n' +
      'than the FIFO (deadlock).',
    { bytes: W, fifoBytes },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const s = sinkStream({ bytes: W }).declare(m, 's_axis', 'AXI4-Stream input: ULP data, one packet per ULPDU, from lane 0 (s_axis)');
  const cg = 'Placement command: one per packet, in packet order (s_cmd)';
  const cmdValid = m.input('s_cmd_valid', 1, { group: cg });
  const cmdReady = m.output('s_cmd_ready', 1, { group: cg });
  const cmdAddr = m.input('s_cmd_addr', 64, { group: cg, doc: 'host address of the packet\'s first octet (any alignment)' });
  const cmdDiscard = m.input('s_cmd_discard', 1, { group: cg, doc: '1: drop the packet, write nothing' });
  const wg = 'Host memory write (held while wr_ready is low)';
  const wrValid = m.output('wr_valid', 1, { group: wg });
  const wrReady = m.input('wr_ready', 1, { group: wg });
  const wrAddr = m.output('wr_addr', 64, { group: wg, doc: `a multiple of ${W}` });
  const wrData = m.output('wr_data', 8 * W, { group: wg, doc: 'lane j: the octet at wr_addr + j' });
  const wrStrb = m.output('wr_strb', W, { group: wg, doc: 'never 0' });
  const idle = m.output('idle', 1, { group: 'Status', doc: 'every accepted command finished (its writes accepted), none held' });
  const done = m.output('done', 1, { group: 'Status', doc: 'the last write beat of a command that placed its packet is accepted (one cycle; commands finish in order)' });
  m.allowUnused(s.keep!, 'only the last beat\'s count is kept, as tkeep[W-1:1] (tkeep is 2^k - 1 with k >= 1 there, all ones elsewhere)');

  const lane = (x: Expr, unit: number, i: number) => x.slice(unit * i + unit - 1, unit * i);

  // --- FIFO: a block-RAM FIFO whose read register is the head beat -----------------------------
  // bramFifo keeps "memory full" and "memory empty" as flip-flops beside its count, so s_axis_tready
  // is a register: ddp_rx_hdr's output stage (and the top's s_axis_tready behind it) sees no
  // pointer compare of this block in front of its own handshake logic.
  const inFire = m.wire('in_fire', 1, { doc: 'an input beat enters the FIFO' });
  const qTake = m.wire('q_take', 1, { doc: 'the head beat is written or dropped' });
  // tkeep = 2^k − 1 on the last beat: k − 1 is the number of ones above lane 0.
  const inCnt = thermometerCount(m, 'in_count_m1', s.keep!.slice(W - 1, 1), 'valid octets of this beat minus one');
  const q = bramFifo(m, 'fifo', EW, depth, { push: inFire, data: cat(s.last!, inCnt, s.data), pop: qTake });
  m.assign(s.ready, q.full.not());
  m.assign(inFire, s.valid.and(q.full.not()));
  const qValid = q.headValid;
  const qData = q.head.slice(8 * W - 1, 0);
  const qCnt = q.head.slice(8 * W + LW - 1, 8 * W);
  const qLast = q.head.bit(EW - 1);

  // --- commands: the active one and one pending ---------------------------------------------------
  const actValid = m.reg('act_valid', 1, { reset: 0, doc: 'a command is active: its packet is being placed or dropped' });
  const actDiscard = m.reg('act_discard', 1);
  const actOff = m.reg('act_off', LW, { doc: 'addr mod W: the lanes the packet is rotated up by' });
  const actBeat = m.reg('act_beat', 64 - LW, { doc: 'addr / W of the next write beat' });
  const actFlush = m.reg('act_flush', 1, { reset: 0, doc: 'the last beat spilled: the flush beat (carry alone) is due' });
  const pendValid = m.reg('pend_valid', 1, { reset: 0, doc: 'a command waits for the active one to finish' });
  const pendAddr = m.reg('pend_addr', 64);
  const pendDiscard = m.reg('pend_discard', 1);
  const carry = m.reg('carry_data', 8 * W, { doc: 'the previous beat rotated; its lanes below act_off belong to the next write beat' });
  const carryKeep = m.reg('carry_keep', W, { reset: 0, doc: 'packet octets in the carry lanes (0 at a packet start)' });

  // --- write output register ----------------------------------------------------------------------
  const outValid = m.reg('out_valid', 1, { reset: 0 });
  const outBeat = m.reg('out_beat', 64 - LW);
  const outData = m.reg('out_data', 8 * W);
  const outStrb = m.reg('out_strb', W);
  const outEnd = m.reg('out_end', 1, { doc: "the write beat is its command's last" });
  m.assign(wrValid, outValid);
  m.assign(wrAddr, cat(outBeat, lit(LW, 0)));
  m.assign(wrData, outData);
  m.assign(wrStrb, outStrb);
  m.assign(cmdReady, pendValid.not());
  m.assign(idle, actValid.or(pendValid).or(outValid).not());
  m.assign(done, outValid.and(outEnd).and(wrReady));

  // --- realignment: rotate the head beat up by act_off lanes (a barrel of log2 W stages) -----------
  let rd: Expr = qData;
  for (let b = 0; b < LW; b++) rd = m.let(`rot_data_${b}`, mux(actOff.bit(b), rotUp(rd, 8, W, 1 << b), rd));
  // The head beat's octets are lanes 0..q_cnt, moved up by act_off: lane L holds one iff
  // (L − act_off) mod W ≤ q_cnt. A small compare per lane, not a barrel shifter behind a decode.
  const rk = m.let('rot_keep', cat(...Array.from({ length: W }, (_, L) => lit(LW, L).sub(actOff).le(qCnt)).reverse()), {
    doc: 'the head beat\'s valid lanes, rotated up by act_off',
  });
  const low = m.let('carry_lanes', cat(...Array.from({ length: W }, (_, L) => (L === W - 1 ? lit(1, 0) : actOff.gt(L))).reverse()), {
    doc: 'lanes below act_off: from the carry (the previous beat)',
  });
  const lowBytes = cat(...Array.from({ length: W }, (_, L) => lane(low, 1, L).repeat(8)).reverse());
  const beatData = m.let('beat_data', carry.and(lowBytes).or(rd.and(lowBytes.not())));
  const beatStrb = m.let('beat_strb', carryKeep.and(low).or(rk.and(low.not())));
  // Some rotated octet lands below act_off (the next write beat) iff act_off + q_cnt ≥ W: a carry.
  const spill = m.let('spill', actOff.zext(LW + 1).add(qCnt.zext(LW + 1)).bit(LW), { doc: 'this beat has octets for the next write beat' });

  // --- handshakes ----------------------------------------------------------------------------------
  const outFree = m.let('out_free', outValid.not().or(wrReady));
  const go = m.let('place_beat', actValid.and(actDiscard.not()).and(actFlush.not()).and(qValid).and(outFree), { doc: 'a head beat is written' });
  const goFlush = m.let('place_flush', actValid.and(actFlush).and(outFree), { doc: 'the flush beat is written' });
  const goDrop = m.let('drop_beat', actValid.and(actDiscard).and(qValid), { doc: 'a head beat is dropped' });
  m.assign(qTake, go.or(goDrop));
  const finish = m.let('act_finish', go.and(qLast).and(spill.not()).or(goFlush).or(goDrop.and(qLast)), { doc: 'the active command is done' });
  const actFree = m.let('act_free', actValid.not().or(finish), { doc: 'the active slot takes a command at this edge' });
  const cmdFire = m.let('cmd_fire', cmdValid.and(pendValid.not()));

  m.sync(() => {
    m.when(wrReady, () => m.set(outValid, 0));
    m.when(go, () => {
      m.set(outValid, 1);
      m.set(outBeat, actBeat);
      m.set(outData, beatData);
      m.set(outStrb, beatStrb);
      m.set(outEnd, qLast.and(spill.not()));
      m.set(actBeat, actBeat.add(1));
      m.set(carry, rd);
      m.set(carryKeep, rk.and(low));
      m.when(qLast.and(spill), () => m.set(actFlush, 1));
    });
    m.when(goFlush, () => {
      m.set(outValid, 1);
      m.set(outBeat, actBeat);
      m.set(outData, carry);
      m.set(outStrb, carryKeep);
      m.set(outEnd, 1);
      m.set(actFlush, 0);
      m.set(carryKeep, 0);
    });

    // The active slot takes the pending command, else the one arriving; the pending slot takes
    // an arriving command only while the active one is busy.
    m.when(actFree, () => {
      m.set(actValid, pendValid.or(cmdFire));
      const addr = mux(pendValid, pendAddr, cmdAddr);
      m.set(actDiscard, mux(pendValid, pendDiscard, cmdDiscard));
      m.set(actOff, addr.slice(LW - 1, 0));
      m.set(actBeat, addr.slice(63, LW));
      m.set(pendValid, 0);
    });
    m.when(cmdFire.and(actFree.not()), () => {
      m.set(pendValid, 1);
      m.set(pendAddr, cmdAddr);
      m.set(pendDiscard, cmdDiscard);
    });
  });
  return m.build();
}
