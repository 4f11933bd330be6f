/**
 * The PortSpec entries of one AXI4-Stream interface, for buildModel: saves listing six ports by
 * hand for every stream a DUT has. `flow: 'in'` is a stream into the DUT (its s_axis_* side:
 * payload and tvalid are inputs, tready an output); `'out'` the reverse.
 */
import type { PortDirection, PortSpec } from '../verilator/port-spec';

export interface AxisPortOptions {
  readonly dataWidth: number;
  /** Default true: one tkeep bit per octet. */
  readonly keep?: boolean;
  /** Default true. */
  readonly last?: boolean;
  /** tuser width; 0 for none (default 1). */
  readonly userWidth?: number;
}

const OCTET_BITS = 8;
const DEFAULT_USER_WIDTH = 1;

export function axisPortSpecs(prefix: string, flow: 'in' | 'out', opts: AxisPortOptions): PortSpec[] {
  const payload: PortDirection = flow === 'in' ? 'input' : 'output';
  const back: PortDirection = flow === 'in' ? 'output' : 'input';
  const userWidth = opts.userWidth ?? DEFAULT_USER_WIDTH;
  const ports: PortSpec[] = [{ name: `${prefix}_tdata`, direction: payload, width: opts.dataWidth }];
  if (opts.keep ?? true) ports.push({ name: `${prefix}_tkeep`, direction: payload, width: Math.ceil(opts.dataWidth / OCTET_BITS) });
  ports.push({ name: `${prefix}_tvalid`, direction: payload, width: 1 }, { name: `${prefix}_tready`, direction: back, width: 1 });
  if (opts.last ?? true) ports.push({ name: `${prefix}_tlast`, direction: payload, width: 1 });
  if (userWidth > 0) ports.push({ name: `${prefix}_tuser`, direction: payload, width: userWidth });
  return ports;
}
