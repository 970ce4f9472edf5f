#!/usr/bin/env bash
# Import fresh SkyPilot catalogs as today's price snapshots, rebuild, test, and
# write the change report. Used by .github/workflows/price-refresh.yml; run it
# by hand the same way:
#
#   scripts/refresh-prices.sh CATALOG_DIR [YYYY-MM-DD [COMMIT]]
#
# COMMIT is the catalog repository's commit the CSVs were fetched at; the
# snapshots name it as their source.
#
# CATALOG_DIR holds one vms.csv per cloud, named <provider>.csv (lambda.csv,
# nebius.csv, runpod.csv, aws.csv, gcp.csv, azure.csv). Exit status: 0 nothing
# changed, 3 figures changed (report in build/changes.md, cut to a pull
# request body's length, and whole in build/changes-full.md), anything else a
# failure (bad price, failing test).
#
# A snapshot of that day already in content/prices/ is kept as it is: someone
# may have confirmed a price in it (confirmed: true) after the guard stopped an
# earlier run. Remove it to import that catalog again.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:?usage: scripts/refresh-prices.sh CATALOG_DIR [YYYY-MM-DD [COMMIT]]}
day=${2:-$(date -u +%F)}
commit=(${3:+--commit "$3"})
declare -A names=([lambda]=Lambda [nebius]=Nebius [runpod]=RunPod [aws]=AWS [gcp]="Google Cloud" [azure]=Azure)

make --quiet .venv/.installed
for provider in "${!names[@]}"; do
  csv="$dir/$provider.csv"
  [ -f "$csv" ] || { echo "skip $provider: no $csv"; continue; }
  kept="content/prices/$provider/$day.yaml"
  [ -e "$kept" ] && { echo "skip $provider: $kept is already there (remove it to import again)"; continue; }
  # a provider's name comes from its latest snapshot (a writer may have changed it); these are for a first import
  name=()
  compgen -G "content/prices/$provider/*.yaml" >/dev/null || name=(--name "${names[$provider]}")
  .venv/bin/costpress import-prices skypilot "$csv" --provider "$provider" "${name[@]}" --checked "$day" "${commit[@]}"
done

make site
make test
mkdir -p build
# the report of the site just built against the one committed: whole in changes-full.md, and cut to what a
# pull request's body holds (65,536 characters) in changes.md; that one builds again in memory, so that it opens
# with the build's warnings (an article on prices grown stale, say), which CI's build --strict fails on
status=0
.venv/bin/costpress changes --new site/figures.json --format markdown > build/changes-full.md || status=$?
if [ "$status" = 0 ] || [ "$status" = 3 ]; then
  .venv/bin/costpress changes --format markdown --max-chars 60000 > build/changes.md || [ $? = 3 ]
fi
cat build/changes.md
exit "$status"
