/**
 * Co-simulation: `import { ... } from 'iwarp-rnic/cosim'` (docs/package.md). Needs Verilator,
 * make, g++ and Node's C headers at run time (docs/cosim.md); builds and generated Verilog go to
 * the cache directory (`cacheDir()`, moved by RNIC_CACHE_DIR).
 *
 * Three levels: a whole run against the model (`cosimRnic`, `cosimScenario`, `cosimCrc32c`, or any
 * DUT of `rnic cosim` through `COSIM_DUTS`); a generated block opened in Verilator (`openDut`) with
 * the testbench parts to drive it; and any Verilog built into a model (`buildModel`, `SimModel`).
 */

// Whole runs against the model.
export { cosimRnic, ACTIVE_QPS, type RnicCosimOptions, type RnicCosimResult, type RnicMismatch, type QpConfig } from './cosim/rnic';
export { cosimScenario, type ScenarioCosimOptions, type ScenarioCosimResult } from './cosim/rnic-scenario';
export { cosimCrc32c, type CrcCosimOptions, type CrcCosimResult, type CrcMismatch } from './cosim/crc32c';
export { runRnicCosim, runScenarioCosim, formatRnicCosim, formatScenarioCosim, type RnicCosimReport, type RnicRunArgs, type ScenarioCosimReport } from './cosim/rnic-run';
export { COSIM_DUTS, cosimDut, type CosimArgs, type CosimDut, type CosimOption, type CosimRun } from './cosim/registry';
export type { TopRunResult } from './cosim/scoreboard';

// Transaction traces of a run (`rnic cosim --trace-dir`) and their comparison (`rnic diff`).
export { readTrace, writeTraces, traceFiles, TraceLog, TraceError, type TraceRecord, type TraceSide } from './cosim/trace';
export { diffTraces, formatDiff, channelOf, type DiffOptions, type DiffResult, type Divergence, type Located } from './cosim/trace-diff';

// The integrator's top: its QPs configured over AXI4-Lite from a negotiated connection.
export { negotiatedQpConfig, qpConfigWrites, stagEntryWrites, registerMapOf, type AxilOp, type QpParams } from './host/axil-config';

// A generated block (or the user's Verilog of it) in Verilator, and the testbench parts.
export { openDut, type DutOptions, type DutSelection } from './harness/open-dut';
export { DutBench } from './harness/dut-bench';
export { BackgroundMemory, type Memory } from './harness/memory';
export { HostMemoryPort, type HostMemoryPortOptions, type WriteBeat } from './harness/host-memory-port';
export { ReadPortResponder, type ReadPortOptions } from './harness/read-port';
export { WritePort, type WritePortOptions } from './harness/write-port';
export { Tally } from './harness/tally';
export { RunTimer, type RunTime } from './harness/run-timer';
export { Testbench, DEFAULT_RESET_CYCLES, type TestbenchOptions } from './cocotb/testbench';
export type { Component } from './cocotb/component';
export * from './cocotb/axis';
export { NativeAxisSource } from './cocotb/native-axis-source';
export { NativeAxisSink } from './cocotb/native-axis-sink';
export { NativeRecordSink } from './cocotb/native-record-sink';
export { RecordGroup, type Fields, type FieldValue, type Sampled, type RecordGroupOptions } from './cocotb/record-group';
export { RecordSource, type RecordSourceOptions } from './cocotb/record-source';
export { AxilMaster, type AxilMasterOptions, type AxilWrite, type AxilRead } from './cocotb/axil-master';
export { AxiMemorySlave, AXI_RESP, type AxiMemoryOptions, type AxiMemoryStats } from './harness/axi-memory';
export { RecordSink, RecordMonitor, type RecordSinkOptions, type RecordMonitorOptions } from './cocotb/record-sink';
/** Pause generators for sources and sinks: `pause.random(seed, p)`, `pause.every(n)`, `pause.pattern('..x')`. */
export * as pause from './cocotb/pause';

// Any Verilog as a model in-process.
export { buildModel, buildKey, defaultCacheDir, onModelBuild, traceFormatOf, type BuildNotice, type BuildOptions, type CompiledModel, type Optimize, type TraceFormat } from './verilator/build';
export { SimModel, type PortHandle, type PortRef, type PortValue, type TraceWindow } from './verilator/model';
export type { PortSpec } from './verilator/port-spec';

// Where the Verilog comes from, and where the caches are.
export { moduleSources, type ModuleSources } from '../hdl-gen/gen/sources';
export { cacheDir, CACHE_DIR_ENV, PACKAGE_ROOT } from '../hdl-gen/gen/paths';
export { RtlError } from '../hdl-gen/gen/rtl-error';
