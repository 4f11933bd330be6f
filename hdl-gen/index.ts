/** hdl-gen: a small typed hardware-construction library, its Verilog emitter and the RNIC blocks. */
export { Expr, lit, cat, mux, xorAll, type Value } from './core/expr';
export { Signal, type Domain } from './core/signal';
export { ModuleBuilder, type CaseLabel, type Module, type Memory, type Stmt } from './core/module';
export { HdlError, type SourceLocation } from './core/location';
export { StreamType, sinkStream, sourceStream, type Stream, type StreamSpec } from './core/stream';
export { emitVerilog, literal } from './emit/verilog';
export { crc32cModule } from './blocks/crc32c';
export { RnicConfigSchema, DEFAULT_CONFIG, parseConfig, configHash, type RnicConfig } from './gen/config';
export { generate, writeGenerated, modulesFor, portsOf, type Manifest, type ModuleInfo, type PortInfo } from './gen/generate';
