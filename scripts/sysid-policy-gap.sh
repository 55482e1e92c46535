#!/usr/bin/env bash
# The policy-level proof of system identification (issue 16, docs/sysid.md "Policy level"), as a
# new user would run it: record free-motion takes on a gapped emulated cell, fit the sim twin to
# them, then run the same graded code policies on the same layouts on the cell and in the sim
# twin — once with the built-in record, once with the fitted one — and let `tandem report` pair
# them. Every figure it prints comes from the store and the files in WORK (kept), so it can be
# traced to the takes the fit used (the fitted record's lineage names them by SHA-256).
#
# Usage: scripts/sysid-policy-gap.sh [WORK]     (default: a new temporary folder)
#   GAP=seed:3 TAKES=6 TAKE_S=12 HOLDOUT=2 TIERS=1 PER_TIER=3 EPISODE_S=30 POLICIES=a,b,c scripts/sysid-policy-gap.sh
# Needs a quiet machine: the emulated cell runs in real time, and takes it could not keep in real
# time are left out by the fit (it says so). Takes about 12 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

WORK=${1:-$(mktemp -d /tmp/tandem-sysid-gap.XXXXXX)}
GAP=${GAP:-seed:3}
TAKES=${TAKES:-6}
TAKE_S=${TAKE_S:-12}
HOLDOUT=${HOLDOUT:-2}
TIERS=${TIERS:-1}
PER_TIER=${PER_TIER:-3}
EPISODE_S=${EPISODE_S:-30}
POLICIES=${POLICIES:-code:bottles-in-the-bin,code:bottles-in-the-bin?skill=0.6,code:bottles-in-the-bin?skill=0.3}
mkdir -p "$WORK"
export TANDEM_DATA="$WORK/data"
tandem() { node bin/tandem.js "$@"; }
say() { printf '\n== %s\n' "$*" >&2; }

say "work folder $WORK, cell gap $GAP"
tandem layouts sample --task bottles-in-the-bin --tiers "$TIERS" --per-tier "$PER_TIER" --seed 17 -o "$WORK/set.json" >&2
LAYOUTS=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).layouts.length)' "$WORK/set.json")
printf '{"type":"yam-cell","transport":"slcan","gap":"%s"}\n' "$GAP" > "$WORK/cell.json"

say "1. $TAKES free-motion takes of ${TAKE_S} s on the cell's empty table"
tandem sysid excite --seconds $((TAKES * TAKE_S + 30)) -o "$WORK/excite.json" >&2
# A starved machine can lose the emulated leader mid-take; headless, nobody is there to re-engage,
# so the recording is stopped (as Q would) after a generous budget and the fit uses the kept takes.
timeout -s INT $((TAKES * (TAKE_S + 8) + 60)) node bin/tandem.js teleop record --leader emulated-yam \
  --trajectory "$WORK/excite.json" --empty-table --gap "$GAP" --task bottles-in-the-bin \
  --episodes "$TAKES" --seconds "$TAKE_S" --reset 1 --out "$WORK/takes" </dev/null >&2 || say "recording stopped early: fitting on the takes kept"

say "2. fit (the last $HOLDOUT takes held out)"
tandem sysid fit "$WORK"/takes/*.mcap --holdout "$HOLDOUT" -o "$WORK/fitted.json" --plot "$WORK/fit.svg" --json > "$WORK/fit.json"

say "3. the same policies on the same layouts: cell, sim (built-in record), sim (fitted record)"
IFS=',' read -r -a POLICY_LIST <<< "$POLICIES"
for p in "${POLICY_LIST[@]}"; do
  for ((i = 0; i < LAYOUTS; i++)); do
    tandem rig rollout --rig-config "$WORK/cell.json" --layouts "$WORK/set.json" --layout "$i" --policy "$p" \
      --seconds "$EPISODE_S" --score-from-cell --json > "$WORK/cell-$i-${p//[^a-z0-9.]/_}.json" || true
  done
  tandem sim sweep --layouts "$WORK/set.json" --policy "$p" --seconds "$EPISODE_S" --json > "$WORK/sim-default-${p//[^a-z0-9.]/_}.json"
  tandem sim sweep --layouts "$WORK/set.json" --policy "$p" --seconds "$EPISODE_S" --calibration "$WORK/fitted.json" --json > "$WORK/sim-fitted-${p//[^a-z0-9.]/_}.json"
done

say "4. the paired reports"
default_sha=$(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(r.simCalibration)' "$WORK/sim-default-${POLICY_LIST[0]//[^a-z0-9.]/_}.json")
fitted_sha=$(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(r.simCalibration)' "$WORK/sim-fitted-${POLICY_LIST[0]//[^a-z0-9.]/_}.json")
for which in default fitted; do
  sha=$([ $which = default ] && echo "$default_sha" || echo "$fitted_sha")
  tandem report --policies "$POLICIES" --layouts "$WORK/set.json" --episode-seconds "$EPISODE_S" \
    --sim-calibration "$sha" -o "$WORK/report-$which.html" --json > "$WORK/report-$which.json"
done
node scripts/sysid-policy-gap-summary.mjs "$WORK"
