import { mpaTxModule } from './hdl-gen/blocks/mpa-tx';
import { emitVerilog } from './hdl-gen/emit/verilog';
import { writeFileSync } from 'node:fs';
for (const w of [4, 8, 64]) writeFileSync(`/tmp/mpa_tx_w${w}.v`, emitVerilog(mpaTxModule(w)));
