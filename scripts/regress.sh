#!/usr/bin/env bash
# The long co-simulation regression (minutes, not part of `make test`): the whole RNIC, every
# block and the receive path against the model, at 8 and 64 octets, with faults, from one seed;
# and every example scenario with the RTL as its responder (those it refuses are listed, not run).
# scripts/mutants.ts measures what this catches.
#   REGRESS_SEED=N  replays a run (default 1); REGRESS_SCALE=K multiplies the workload (default 1).
set -uo pipefail
cd "$(dirname "$0")/.."
seed=${REGRESS_SEED:-1}
k=${REGRESS_SCALE:-1}
failed=0
run() {
  local name=$1; shift
  local t0=$SECONDS
  if out=$(node bin/rnic.mjs cosim "$@" --seed "$seed" --json 2>&1); then
    echo "PASS  $name ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    echo "FAIL  $name ($((SECONDS - t0)) s): replay with: npx rnic cosim $* --seed $seed"
    echo "$out" | head -c 2000; echo
  fi
}
scenario() {
  local file=$1 w=$2
  local t0=$SECONDS
  out=$(node bin/rnic.mjs cosim --scenario "$file" --width "$w" --seed "$seed" --json 2>&1)
  case $? in
    0) echo "PASS  scenario $file w$w ($((SECONDS - t0)) s)" ;;
    2) if grep -q 'cannot run on the RTL' <<<"$out"; then echo "SKIP  scenario $file w$w: refused: ${out#*cannot run on the RTL: }"
       else failed=$((failed + 1)); echo "FAIL  scenario $file w$w: $out"; fi ;;
    *) failed=$((failed + 1))
       echo "FAIL  scenario $file w$w ($((SECONDS - t0)) s): replay with: npx rnic cosim --scenario $file --width $w --seed $seed"
       echo "$out" | head -c 2000; echo ;;
  esac
}
for w in 8 64; do
  for f in examples/*.json examples/faults/*.json; do scenario "$f" "$w"; done
  run "rnic_top w$w" --dut rnic --width "$w" --ops $((10000 * k)) --faults 0.1
  run "rx w$w" --dut rx --width "$w" --frames $((30000 * k)) --faults 0.1
  run "rnic_rx w$w" --dut rnic_rx --width "$w" --frames $((20000 * k)) --faults 0.1
  run "mpa w$w" --dut mpa --width "$w" --frames $((20000 * k)) --faults 0.02
  run "ddp_rx_hdr w$w" --dut ddp_rx_hdr --width "$w" --frames $((50000 * k)) --faults 0.3
  run "crc32c w$w" --dut crc32c --width "$w" --frames $((200000 * k))
done
run "atomic_unit" --dut atomic_unit --frames $((100000 * k))
run "stag_table d1024" --dut stag_table --depth 1024 --frames $((200000 * k))
echo "regression (seed $seed): $failed failed"
exit $(( failed > 0 ))
