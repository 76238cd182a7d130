# The client-simulator reliability study (paper appendix C, Table 4): sampled training
# consultations -> answers of each client model x strategy (audited, judged) -> Table 4, which
# the tables job copies into the published tables. Only when reliability.enabled.


RELIABILITY = PLAN.reliability


if RELIABILITY.reliability_enabled:

    rule reliability_sample:
        input:
            unpack(STEPS.reliability_sample.inputs),
        output:
            RELIABILITY.reliability_items_file,
        params:
            step=STEPS.reliability_sample.name,
            spec=STEPS.reliability_sample.spec,
        resources:
            api=STEPS.reliability_sample.api,
            runtime=60,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(RELIABILITY.reliability_items_file),
        script:
            "../scripts/step.py"

    rule reliability:
        input:
            unpack(STEPS.reliability.inputs),
        output:
            paths.RELIABILITY,
        params:
            step=STEPS.reliability.name,
            spec=STEPS.reliability.spec,
        resources:
            api=STEPS.reliability.api,
            runtime=STEPS.reliability.minutes(120, 15),
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(paths.RELIABILITY),
        script:
            "../scripts/step.py"

    rule table4_build:
        input:
            unpack(STEPS.table4.inputs),
        output:
            directory(RELIABILITY.table4_dir),
        params:
            step=STEPS.table4.name,
            spec=STEPS.table4.spec,
        resources:
            runtime=10,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(RELIABILITY.table4_dir),
        script:
            "../scripts/step.py"
