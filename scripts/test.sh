#!/usr/bin/env bash
# Runs the whole vitest suite and ends with a plain "N passed, N failed" line for CI logs.
# Random tests draw from RNIC_SEED (see test/support/random.ts); a failure prints the seed.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
echo "test seed: RNIC_SEED=${RNIC_SEED:-default}"
# A run that dies before writing its report must not print the last run's numbers.
rm -f .cache/vitest.json
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest.json "$@"
status=$?
# A file that fails to load or a suite-level error counts as failed (scripts/test-summary.mjs).
node scripts/test-summary.mjs .cache/vitest.json
exit $status
