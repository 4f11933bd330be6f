/**
 * A scenario and a mutant the rnic_top scenario tests share (test/cosim/rnic-scenario*.test.ts), so
 * they run the same RTL and its build is made once.
 */
import type { ScenarioInput } from '../../ts-model/scenario/schema';

/** Sends only: everything the responder places goes into its receive buffers. */
export const sends = (over: Partial<ScenarioInput> = {}): ScenarioInput => ({
  name: 'sends into receive buffers',
  seed: 5,
  connection: { emss: 1460, initiator: { markers: true }, responder: { markers: true } },
  receives: [{ at: 'responder', length: 4096, count: 4 }],
  ops: [
    { from: 'initiator', op: 'send', length: 1000 },
    { from: 'initiator', op: 'send-se', length: 3000 },
    { from: 'initiator', op: 'send', length: 17 },
  ],
  ...over,
});

/** The top with bit 0 of every mem_wr_data beat flipped (a `mutate` edit of its Verilog). */
export const flipMemWrData = (v: string): string => v.replace(/assign mem_wr_data = (.*);/, "assign mem_wr_data = ($1) ^ 64'h1;");
