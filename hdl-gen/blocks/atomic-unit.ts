import { Expr, cat, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { stateMachine } from '../lib/fsm';

/**
 * The RFC 7306 atomic unit of the RNIC receive path (spec/rdmap-extensions.md §4, §5): FetchAdd
 * and CmpSwap on a 64-bit host-memory target, strictly in order and one at a time.
 *
 * Serialization: `req_ready` is high only in IDLE, and a request leaves IDLE for READ; the unit
 * returns to IDLE only after the write-back is accepted (FetchAdd, CmpSwap hit) or the read data
 * has been evaluated (CmpSwap miss, nothing to write). So a second operation never reads memory
 * before the first's write is accepted: atomic against every other atomic of the RNIC (§4.5).
 *
 * States: IDLE → READ (rd_valid) → WAIT (for rd_data_valid; accepted in READ too, at the read
 * handshake, for a zero-latency memory) → CALC (registered orig; one 64-bit adder, the closed form
 * of §4.1, and the CmpSwap compare) → WRITE (wr_valid; FetchAdd and CmpSwap hit only; a miss
 * leaves memory untouched and writes nothing) → response. The response sits in its own output
 * register: the FSM loads it when it is free (or being taken) and goes straight to IDLE, so the
 * next operation can run while the response waits for rsp_ready; otherwise it waits in RESP.
 * Latency without back-pressure (request accepted at edge k, read data L cycles after the read
 * handshake, L = 0 meaning in the handshake cycle): rd_valid in cycle k+1; FetchAdd and CmpSwap
 * hit: wr_valid in k+3+L, rsp_valid and req_ready again in k+4+L (one operation per 4 + L cycles);
 * CmpSwap miss: k+3+L; misaligned / unsupported: rsp_valid in k+2.
 *
 * Errors (no memory access at all, rsp_orig = 0, rsp_match = 0), in the responder's check order
 * of spec/rdmap-extensions.md (A4 before A9): an AOpCode other than 0x0/0x2 → rsp_status 2; a
 * target with addr[2:0] ≠ 0 → rsp_status 1. They take IDLE → RESP → IDLE.
 *
 * Byte order: rd_data / wr_data carry the 8 octets in memory order (octet at the address in bits
 * [7:0]); cfg_big_endian (sampled with each request) selects whether that word is the target's
 * integer as is (little-endian host memory, the default) or byte-reversed. rsp_orig and all
 * operands are integers. wr_strb is always all ones (the whole 8-octet target).
 */
export const ATOMIC_STATUS = Object.freeze({ OK: 0, MISALIGNED: 1, UNSUPPORTED: 2 });

/** Idle; read request; waiting for the data; computing; write-back; waiting for the response register. */
const STATES = ['IDLE', 'READ', 'WAIT', 'CALC', 'WRITE', 'RESP'] as const;
const MEANING = {
  IDLE: 'no operation',
  READ: 'read request',
  WAIT: 'waiting for the read data',
  CALC: 'computing the new value',
  WRITE: 'write-back',
  RESP: 'waiting for the response register',
} as const;

/** The 8 octets of `x` in the reverse order (bits [7:0] ↔ [63:56], …). */
function byteSwap64(x: Expr): Expr {
  return cat(...Array.from({ length: 8 }, (_, i) => x.slice(8 * i + 7, 8 * i)));
}

export function atomicUnitModule(): Module {
  const m = new ModuleBuilder(
    'atomic_unit',
    'RFC 7306 atomic unit (FetchAdd 0x0, CmpSwap 0x2): one 64-bit read-modify-write at a time,\n' +
      'strictly in request order (spec/rdmap-extensions.md sections 4 and 5).\n' +
      'FetchAdd: new = (((orig & ~K) + (A & ~K)) mod 2^64) ^ ((orig ^ A) & K), always written back.\n' +
      'CmpSwap: match = ((CD ^ orig) & CM) == 0; on a match new = (orig & ~SM) | (SD & SM) is written,\n' +
      'on a miss nothing is written (memory unchanged). rsp_orig returns orig in every case.\n' +
      'rsp_status: 0 ok, 1 misaligned (addr[2:0] != 0), 2 unsupported AOpCode; both without any\n' +
      'memory access. rd_data/wr_data: octets in memory order (octet at the address in [7:0]);\n' +
      'cfg_big_endian: the target is big-endian in host memory (0: little-endian).\n' +
      'A second operation does not read memory until the first one\'s write-back is accepted.',
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const cfgBigEndian = m.input('cfg_big_endian', 1, { group: 'Configuration', doc: '1: the 8-octet target is big-endian in host memory' });

  const rq = 'Atomic request';
  const reqValid = m.input('req_valid', 1, { group: rq });
  const reqReady = m.output('req_ready', 1, { group: rq });
  const reqAopcode = m.input('req_aopcode', 4, { group: rq, doc: '0x0 FetchAdd, 0x2 CmpSwap; others: rsp_status 2' });
  const reqAddr = m.input('req_addr', 64, { group: rq, doc: 'translated host address of the target' });
  const reqAddSwap = m.input('req_add_swap', 64, { group: rq, doc: 'Add Data / Swap Data' });
  const reqAddSwapMask = m.input('req_add_swap_mask', 64, { group: rq, doc: 'Add Mask / Swap Mask' });
  const reqCompare = m.input('req_compare', 64, { group: rq, doc: 'Compare Data' });
  const reqCompareMask = m.input('req_compare_mask', 64, { group: rq, doc: 'Compare Mask' });
  const reqTag = m.input('req_tag', 32, { group: rq, doc: 'opaque, echoed on rsp_tag' });

  const rdg = 'Memory read';
  const rdValid = m.output('rd_valid', 1, { group: rdg });
  const rdReady = m.input('rd_ready', 1, { group: rdg });
  const rdAddr = m.output('rd_addr', 64, { group: rdg });
  const rdDataValid = m.input('rd_data_valid', 1, { group: rdg, doc: 'always accepted; in read order, at or after the read handshake' });
  const rdData = m.input('rd_data', 64, { group: rdg, doc: 'octets in memory order (octet at rd_addr in [7:0])' });

  const wrg = 'Memory write';
  const wrValid = m.output('wr_valid', 1, { group: wrg });
  const wrReady = m.input('wr_ready', 1, { group: wrg });
  const wrAddr = m.output('wr_addr', 64, { group: wrg });
  const wrData = m.output('wr_data', 64, { group: wrg, doc: 'octets in memory order' });
  const wrStrb = m.output('wr_strb', 8, { group: wrg });

  const rsg = 'Atomic response';
  const rspValid = m.output('rsp_valid', 1, { group: rsg });
  const rspReady = m.input('rsp_ready', 1, { group: rsg });
  const rspTag = m.output('rsp_tag', 32, { group: rsg });
  const rspOrig = m.output('rsp_orig', 64, { group: rsg, doc: 'original value (integer); 0 on an error' });
  const rspStatus = m.output('rsp_status', 2, { group: rsg, doc: '0 ok, 1 misaligned, 2 unsupported AOpCode' });
  const rspMatch = m.output('rsp_match', 1, { group: rsg, doc: 'CmpSwap compare matched (0 for FetchAdd and errors)' });

  const opFetchAdd = m.constant('AOP_FETCH_ADD', 4, 0x0, 'AOpCode FetchAdd');
  const opCmpSwap = m.constant('AOP_CMP_SWAP', 4, 0x2, 'AOpCode CmpSwap');

  const fsm = stateMachine(m, 'state', STATES, { reset: 'IDLE', meaning: MEANING });
  const state = fsm.state;
  const isCmpSwap = m.reg('op_cmp_swap', 1, { doc: 'the operation is CmpSwap (else FetchAdd)' });
  const bigEndian = m.reg('op_big_endian', 1, { doc: 'cfg_big_endian sampled with the request' });
  const addr = m.reg('op_addr', 64);
  const addSwap = m.reg('op_add_swap', 64);
  const addSwapMask = m.reg('op_add_swap_mask', 64);
  const compare = m.reg('op_compare', 64);
  const compareMask = m.reg('op_compare_mask', 64);
  const tag = m.reg('op_tag', 32);
  const status = m.reg('op_status', 2, { doc: 'response status of the operation' });
  const orig = m.reg('op_orig', 64, { doc: 'the original value as an integer (0 on an error)' });
  const match = m.reg('op_match', 1, { doc: 'CmpSwap matched' });
  const newWord = m.reg('op_wr_data', 64, { doc: 'the new value in memory order' });

  const rspValidReg = m.reg('resp_valid', 1, { reset: 0 });
  const rspTagReg = m.reg('resp_tag', 32);
  const rspOrigReg = m.reg('resp_orig', 64);
  const rspStatusReg = m.reg('resp_status', 2);
  const rspMatchReg = m.reg('resp_match', 1);

  const inIdle = m.let('in_idle', fsm.is('IDLE'));
  const inRead = m.let('in_read', fsm.is('READ'));
  const inWrite = m.let('in_write', fsm.is('WRITE'));
  m.assign(reqReady, inIdle);
  m.assign(rdValid, inRead);
  m.assign(rdAddr, addr);
  m.assign(wrValid, inWrite);
  m.assign(wrAddr, addr);
  m.assign(wrData, newWord);
  m.assign(wrStrb, 0xff);
  m.assign(rspValid, rspValidReg);
  m.assign(rspTag, rspTagReg);
  m.assign(rspOrig, rspOrigReg);
  m.assign(rspStatus, rspStatusReg);
  m.assign(rspMatch, rspMatchReg);

  const reqFire = m.let('req_fire', reqValid.and(inIdle));
  const rdFire = m.let('rd_fire', inRead.and(rdReady));
  const wrFire = m.let('wr_fire', inWrite.and(wrReady));
  const rspFree = m.let('rsp_free', rspValidReg.not().or(rspReady), { doc: 'the response register can take a response this cycle' });

  // Request checks, in the responder's order (A4 AOpCode before A9 alignment).
  const supported = m.let('req_supported', reqAopcode.eq(opFetchAdd).or(reqAopcode.eq(opCmpSwap)));
  const aligned = m.let('req_aligned', reqAddr.slice(2, 0).eq(0));
  const reqStatus = m.let(
    'req_status',
    mux(supported.not(), m.constant('ST_UNSUPPORTED', 2, ATOMIC_STATUS.UNSUPPORTED, 'rsp_status: unsupported AOpCode'),
      mux(aligned.not(), m.constant('ST_MISALIGNED', 2, ATOMIC_STATUS.MISALIGNED, 'rsp_status: target not 64-bit aligned'), m.constant('ST_OK', 2, ATOMIC_STATUS.OK, 'rsp_status: done'))),
  );

  // The read data as an integer, in the target's byte order.
  const rdInt = m.let('rd_int', mux(bigEndian, byteSwap64(rdData), rdData));
  const rdTake = m.let('rd_take', rdDataValid.and(fsm.is('WAIT').or(rdFire)), { doc: 'the read data arrives (at the handshake for a zero-latency memory)' });

  // CALC: the closed form of spec/rdmap-extensions.md §4.1 and the §4.2 compare, on op_orig.
  const notK = addSwapMask.not();
  const faNew = m.let('fa_new', orig.and(notK).add(addSwap.and(notK)).xor(orig.xor(addSwap).and(addSwapMask)));
  // The §4.2 compare is made on the read data as it arrives and registered with op_orig: CALC's
  // write-back decision then starts from a flip-flop, not from a 64-bit compare.
  const csMatchIn = m.let('cs_match_in', compare.xor(rdInt).and(compareMask).eq(0), { doc: 'the CmpSwap compare on the arriving read data' });
  const csMatch = m.reg('cs_match', 1, { doc: 'the CmpSwap compare matched op_orig' });
  const csNew = m.let('cs_new', orig.and(notK).or(addSwap.and(addSwapMask)));
  const newInt = m.let('new_int', mux(isCmpSwap, csNew, faNew));
  const writeBack = m.let('write_back', isCmpSwap.not().or(csMatch), { doc: 'FetchAdd, or CmpSwap hit: the new value is written' });

  /** The operation is done: the response register takes it when free; otherwise wait in RESP. */
  const finish = (matchNow: Expr) =>
    m.when(
      rspFree,
      () => {
        m.set(rspValidReg, 1);
        m.set(rspTagReg, tag);
        m.set(rspOrigReg, orig);
        m.set(rspStatusReg, status);
        m.set(rspMatchReg, matchNow);
        fsm.goto('IDLE');
      },
      () => fsm.goto('RESP'),
    );

  m.sync(() => {
    m.when(rspValidReg.and(rspReady), () => m.set(rspValidReg, 0));
    m.switch(state, [
      [
        fsm.value('IDLE'),
        () =>
          m.when(reqFire, () => {
            m.set(isCmpSwap, reqAopcode.eq(opCmpSwap));
            m.set(bigEndian, cfgBigEndian);
            m.set(addr, reqAddr);
            m.set(addSwap, reqAddSwap);
            m.set(addSwapMask, reqAddSwapMask);
            m.set(compare, reqCompare);
            m.set(compareMask, reqCompareMask);
            m.set(tag, reqTag);
            m.set(status, reqStatus);
            m.set(orig, 0);
            m.set(match, 0);
            m.set(state, mux(reqStatus.eq(ATOMIC_STATUS.OK), fsm.value('READ'), fsm.value('RESP')));
          }),
      ],
      [
        fsm.value('READ'),
        () =>
          m.when(rdFire, () => {
            fsm.goto('WAIT');
            m.when(rdTake, () => {
              m.set(orig, rdInt);
              m.set(csMatch, csMatchIn);
              fsm.goto('CALC');
            });
          }),
      ],
      [
        fsm.value('WAIT'),
        () =>
          m.when(rdTake, () => {
            m.set(orig, rdInt);
            m.set(csMatch, csMatchIn);
            fsm.goto('CALC');
          }),
      ],
      [
        fsm.value('CALC'),
        () => {
          m.set(newWord, mux(bigEndian, byteSwap64(newInt), newInt));
          m.set(match, isCmpSwap.and(csMatch));
          m.when(writeBack, () => fsm.goto('WRITE'), () => finish(isCmpSwap.and(csMatch)));
        },
      ],
      [fsm.value('WRITE'), () => m.when(wrFire, () => finish(match))],
      [fsm.value('RESP'), () => finish(match)],
    ]);
  });
  return m.build();
}
