# The front door. Every target sets the project up first (idempotent, seconds when done).
#   make        / make run   the main job: the co-simulation regression of the default RNIC
#                            (rnic_top_w8, 1024 QPs) against the model: PASS/FAIL with evidence
#   make demo               the demo scenario on the golden model, and its pcap
#   make test               type-check and run every test
#   make regress            the long co-simulation regression (minutes; REGRESS_SEED, REGRESS_SCALE,
#                            SHARD=i/n for one of n CI runners; JUnit XML in out/regress/)
#   make bench              model benchmarks (numbers for docs/benchmarks.md)
#   make rtl                regenerate rtl/ for the default configuration
SHELL := /bin/bash
.DEFAULT_GOAL := run
.PHONY: run demo setup test typecheck regress bench rtl clean

setup:
	@bash scripts/setup.sh

run: setup
	node bin/rnic.mjs cosim --ops 1000 --seed 1 --faults 0.05

demo: setup
	node bin/rnic.mjs run --scenario examples/demo.json
	@mkdir -p out
	node bin/rnic.mjs pcap --scenario examples/demo.json -o out/demo.pcap
	@echo "out/demo.pcap: both directions as Ethernet/IPv4/TCP; open it in Wireshark"

typecheck: setup
	npx --no-install tsc --noEmit

test: setup typecheck
	bash scripts/test.sh

regress: setup
	npx --no-install tsx scripts/regress.ts $(if $(SHARD),--shard $(SHARD))

rtl: setup
	node bin/rnic.mjs gen --out rtl

bench: setup
	npx --no-install tsx bench/run.ts

clean:
	rm -rf .cache out dist
