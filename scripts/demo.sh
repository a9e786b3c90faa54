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
  2) echo "demo: no strategy fits the F411RE (exit 2 = does not fit; the excess per level is above:"
     echo "      vmcu fits the 128 KB of SRAM, but the 738 KiB of int8 weights exceed its 512 KB of flash)" ;;
  *) echo "demo: sramplan failed with exit code $rc" >&2; exit "$rc" ;;
esac
# The same 128 KB of SRAM with 1 MB of flash (STM32F405RG): vmcu fits.
set +e
build/sramplan plan models/mcunet_blocks/mcunet-320kb-imagenet.graph.json --target stm32f405rg \
  --strategy vmcu --no-map
rc=$?
set -e
case $rc in
  0|2) echo "demo: stm32f405rg plan done (exit $rc)" ;;
  *) echo "demo: sramplan failed with exit code $rc" >&2; exit "$rc" ;;
esac
exit 0
