# lecode: interactive legal consultation evaluation (LeCoDe).
# dataset -> shards -> transcripts -> matches (+ judgements) -> scores -> tables/figures/report
from snakemake.utils import min_version

min_version("9.0")


configfile: "params.yaml"


include: "workflow/rules/common.smk"


# Every job's software under `--software-deployment-method apptainer` (common.smk: IMAGE).
container: IMAGE


include: "workflow/rules/data.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/match.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/servers.smk"
include: "workflow/rules/sft.smk"
include: "workflow/rules/reliability.smk"
include: "workflow/rules/noise.smk"
include: "workflow/rules/dataset.smk"


rule all_tables:
    """The paper-style tables of the configured experiment."""
    input:
        all_table_files(),


rule all:
    """Tables, figures and the self-contained HTML report."""
    input:
        all_report_files(),


rule all_transcripts:
    """Only the simulated consultations (no scoring)."""
    input:
        all_transcript_files(),


rule sft_data:
    """Training dialogues of the SFT strategies (direct, keyfact, keyfact-e): chat JSONL and
    statistics under results/sft/<spec digest>/ (docs/sft.md)."""
    input:
        sft_data_targets(),


rule dataset:
    """A LeCoDe dataset built from the transcripts in corpus.transcripts: pre-annotation,
    review spreadsheets, the reviewed train/test files in corpus.out_dir and, with reviewers,
    the agreement table (docs/building-a-dataset.md)."""
    input:
        CORPUS.targets(),


rule table4:
    """Client-simulator reliability (paper Table 4) under results/table4/<spec digest>/; the
    tables job (all_tables, all) publishes it to reports/tables/table4.*
    (docs/reading-results.md)."""
    input:
        table4_targets,
