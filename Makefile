# The front door. Every target sets the project up first (idempotent, seconds when done).
#   make        / make run   the main job: the golden-model demo
#   make test               type-check and run every test
#   make bench              model benchmarks (numbers for the README)
SHELL := /bin/bash
.DEFAULT_GOAL := run
.PHONY: run setup test typecheck bench clean

setup:
	@bash scripts/setup.sh

run: setup
	node bin/rnic.mjs demo

typecheck: setup
	npx --no-install tsc --noEmit

test: setup typecheck
	bash scripts/test.sh

bench: setup
	npx --no-install tsx bench/run.ts

clean:
	rm -rf .cache
