/**
 * hdl-gen: a small typed hardware-construction library, its Verilog emitter and the RNIC blocks;
 * the package entry `iwarp-rnic/hdl-gen` (docs/package.md).
 */
export { Expr, lit, cat, mux, xorAll, type Value } from './core/expr';
export { Signal, type Domain } from './core/signal';
export { ModuleBuilder, type CaseLabel, type Module, type Memory, type Stmt } from './core/module';
export { HdlError, type SourceLocation } from './core/location';
export { StreamType, sinkStream, sourceStream, type Stream, type StreamSpec } from './core/stream';
export { emitVerilog, literal } from './emit/verilog';
export { crc32cModule } from './blocks/crc32c';
export { RnicConfigSchema, DEFAULT_CONFIG, parseConfig, configHash, type RnicConfig } from './gen/config';
export { generate, writeGenerated, modulesFor, portsOf, type Manifest, type ModuleInfo, type PortInfo } from './gen/generate';
export { withDescendants } from './core/hierarchy';
export { moduleSources, type ModuleSources } from './gen/sources';
export { RtlError, type RtlProblem } from './gen/rtl-error';
export { cacheDir, CACHE_DIR_ENV, PACKAGE_ROOT } from './gen/paths';

// lib/: reusable hardware (README.md's table).
export { record, Layout, type FieldDef, type FieldSpec, type View } from './lib/record';
export { portGroup, enumConstants, type PortGroup } from './lib/ports';
export { stateMachine, type StateMachine } from './lib/fsm';
export { stream, connect, fires, gate, choose, pipelineRegister, pipeline, type Offer, type RegisterOptions, type Stream as ValidReadyStream } from './lib/stage';
export { ram, delay, indexBits, type Ram } from './lib/ram';
export { contextMemory, type ContextMemory } from './lib/context';
export { crcPipeline, type CrcBeatIn, type CrcPipeline, type CrcPipelineOptions } from './lib/crc';
export { oneHotMux, priorityMux, anyOf } from './lib/onehot';
export { fifo, type Fifo } from './lib/fifo';
export { bramFifo, type BramFifo } from './lib/fifo-bram';
export { roundRobin, type Arbiter } from './lib/arbiter';
export { sharedServer, type SharedServer } from './lib/shared-server';
export { thermometerCount } from './lib/keep';
export { laneShiftRight } from './lib/lane-shift';
export { RegisterMapBuilder, portWrites, registerAt, statusBit, AXI_RESP, type RegisterMap, type Register, type StagedPort } from './lib/regmap';
