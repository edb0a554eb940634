#!/usr/bin/env bash
# The device tool copies the working tree (tracked files and untracked files git does not
# ignore) and refuses more than 64 MiB (it refused 66.3 MB in sessions 73 and 75). The tracked tree is larger (about 67 MB in session
# 64), mostly reports and data files that no device run reads. This takes them out of the
# index and lists them in .git/info/exclude for one device call, then puts them back:
#   bash tools/device/trim_tree.sh on     # before the `run` call(s)
#   bash tools/device/trim_tree.sh off    # afterwards (the files never leave the disk)
#   bash tools/device/trim_tree.sh size   # bytes the device would copy now
# Between `on` and `off` do not commit: the taken-out files would be committed as deleted.
# tests/test_warm_l2.py reads warm_l2.csv when pytest collects it: a device pytest run while
# trimmed passes --ignore=tests/test_warm_l2.py (it has no GPU test).
set -eu
cd "$(git rev-parse --show-toplevel)"
EXCLUDE=.git/info/exclude
MARK="# trim_tree.sh"
PATHS="reports calibration/h200/selection_resweep_aj1.csv calibration/h200/selection_resweep_aj2.csv
calibration/h200/selection_resweep_af.csv calibration/h200/tail_stamps_u.json
calibration/h200/tail_stamps_aq.json calibration/h200/block_placement.json
calibration/h200/tail_stamps_ad.json calibration/h200/block_stamps_bk.json
calibration/h200/selection_resweep_ak3.csv calibration/h200/selection_resweep_al.csv
calibration/h200/selection_resweep_am.csv calibration/h200/selection_resweep_ai1.csv
calibration/h200/selection_resweep_ai2.csv calibration/h200/warm_l2.csv
calibration/h200/tail_stamps_ae.json calibration/h100/selection_sweep.csv
calibration/h100/selection_sweep_heldout.csv calibration/h100/selection_sweep_heldout2.csv
calibration/h100/selection_sweep_heldout3.csv calibration/h100/selection_sweep_heldout4.csv
calibration/h100/h200_round52_sweep_on_h100.csv calibration/h200/tail_stamps_ab.json
calibration/h200/ncu_ab_src_1100x900x5200.txt.gz calibration/h200/ncu_ab_src_176x104x448x40.txt.gz
calibration/h200/ncu_ad_src_1000x1000x1000.txt.gz calibration/h200/ncu_av2_src_8192x256x8192.txt.gz
calibration/h200/ncu_ay_src_1024x1024x8192.txt.gz calibration/h200/ncu_be_src_12288x192x448.txt.gz
calibration/h200/ncu_bg_src_11200x1400x1200.txt.gz calibration/h200/ncu_bg_src_350x1400x1200.txt.gz
calibration/h200/ncu_bi_src_1400x1400x4000.txt.gz calibration/h200/ncu_bi_src_1408x1408x4096.txt.gz"

size() {
  git ls-files -z --cached --others --exclude-standard | xargs -0 du -bc 2>/dev/null | tail -1
}

case "${1:-}" in
  on)
    if grep -q "$MARK" "$EXCLUDE" 2>/dev/null; then echo "already trimmed"; size; exit 0; fi
    git rm -r -q --cached $PATHS
    echo "$MARK" >> "$EXCLUDE"
    for p in $PATHS; do echo "/$p" >> "$EXCLUDE"; done
    size
    ;;
  off)
    git reset -q HEAD -- $PATHS
    keep=$(mktemp)
    grep -v -x -F "$MARK" "$EXCLUDE" > "$keep" || true
    for p in $PATHS; do
      grep -v -x -F "/$p" "$keep" > "$keep.2" || true
      mv "$keep.2" "$keep"
    done
    mv "$keep" "$EXCLUDE"
    git status --short | head
    ;;
  size) size ;;
  *) echo "usage: $0 on|off|size" >&2; exit 2 ;;
esac
