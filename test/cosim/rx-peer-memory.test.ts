import { expect, test } from 'vitest';
import { prng } from '../../ts-model/util/prng';
import { RxPeer, newSideEffects } from '../../sim/cosim/rx-peer';

/**
 * The random peer's local memory (sim/cosim/rx-peer.ts): regions, receive buffers and the source
 * buffers of work requests never overlap. The RTL reads a burst's sources after the harness has
 * written all of them, so an overlap would hand it the next buffer's octets (it did: a 49 115-octet
 * Write's last two octets, under the next Send's source, at 64 octets).
 */
test('regions, receive buffers and work-request sources of a long run never overlap', () => {
  for (const seed of [1, 2, 3]) {
    const peer = new RxPeer(prng(seed), { pd: 5, ird: 4, initialMsn: 1, peerMulpdu: 1460, localMulpdu: 1460, bigEndian: false, stagDepth: 256, addressBase: 1n << 59n });
    const fx = newSideEffects();
    for (let i = 0; i < 300; i++) peer.localSend(fx, 60000);
    const spans = peer.ranges.filter((x) => x.len > 0).map((x) => ({ lo: x.addr, hi: x.addr + BigInt(x.len) }));
    spans.sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.lo >= spans[i - 1]!.hi, `seed ${seed}: 0x${spans[i]!.lo.toString(16)} inside the span before it`).toBe(true);
  }
});
