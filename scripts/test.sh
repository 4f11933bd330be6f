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
node -e '
  const r = JSON.parse(require("fs").readFileSync(".cache/vitest.json", "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
' 2>/dev/null || echo "0 passed, 1 failed"
exit $status
