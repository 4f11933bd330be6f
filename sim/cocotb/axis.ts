/**
 * AXI4-Stream drivers and monitor for the Verilator bridge, in the manner of cocotbext-axi:
 * AxisSource drives a DUT's `s_axis_*` inputs, AxisSink takes its `m_axis_*` outputs, AxisMonitor
 * records an interface passively. Each lives in its own file; this is the one to import.
 */
export { AxisSource, type AxisSendBeat, type AxisSideband, type AxisSourceOptions } from './axis-source';
export { AxisSink, type AxisSinkOptions } from './axis-sink';
export { AxisMonitor, type MonitoredBeat } from './axis-monitor';
export { axisBus, type AxisBeat, type AxisBus, type AxisFrame, type AxisUser } from './axis-bus';
