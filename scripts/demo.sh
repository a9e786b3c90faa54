#!/usr/bin/env bash
# The demo: install, build, and plan the whole MCUNet-320KB-ImageNet network (built from the vMCU
# paper's Table 2) for an STM32F411RE (128 KB SRAM) with every strategy side by side.
# Exits 0 whenever sramplan ran correctly, whatever the verdict (0 = fits, 2 = does not fit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release sramplan
set +e
build/sramplan plan models/mcunet_blocks/mcunet-320kb-imagenet.graph.json --target stm32f411re \
  --strategy all --json build/demo-plan.json --csv build/demo-csv
rc=$?
set -e
case $rc in
  0) echo "demo: at least one strategy fits (exit 0); plans in build/demo-plan.json" ;;
  2) echo "demo: no strategy fits in 128 KB yet (exit 2 = does not fit); plans in build/demo-plan.json" ;;
  *) echo "demo: sramplan failed with exit code $rc" >&2; exit "$rc" ;;
esac
exit 0
