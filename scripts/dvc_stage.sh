#!/usr/bin/env bash
# The command of the DVC stages: runs Snakemake for one target, but refuses while another
# Snakemake run holds this project's lock (the stages' outputs are persisted, so DVC deletes
# nothing before this check). Usage: scripts/dvc_stage.sh SNAKEMAKE TARGET
set -euo pipefail
snakemake_bin=$1
target=$2
if compgen -G ".snakemake/locks/*.lock" > /dev/null; then
    echo "dvc_stage: another Snakemake run holds .snakemake/locks; nothing was changed." >&2
    echo "dvc_stage: wait for it to finish (or, if none is running, 'snakemake --unlock')." >&2
    exit 75
fi
# Other Snakemake runs are refused while `dvc repro` holds its lock, until DVC has recorded the
# outputs (lecode/dvc_guard.py); this one is the stage's own.
export LECODE_DVC_STAGE=1
exec "$snakemake_bin" --cores all "$target"
