# The client-simulator reliability study (paper appendix C, Table 4): sampled training
# consultations -> answers of each client model x strategy (audited, judged) -> Table 4, which
# the tables job copies into the published tables. Only when reliability.enabled.


if PLAN.reliability_enabled:

    rule reliability_sample:
        input:
            **with_adapters(
                {
                    "train": PLAN.reliability_sample_spec.train.path,
                    **(
                        {"questions": SETTINGS.reliability.questions_file}
                        if SETTINGS.reliability.questions_file
                        else {}
                    ),
                },
                SETTINGS.reliability.question_writer,
            ),
        output:
            PLAN.reliability_items_file,
        params:
            spec=spec_param(PLAN.reliability_sample_spec),
        resources:
            api=int(PLAN.reliability_sample_spec.writer is not None),
            runtime=60,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(PLAN.reliability_items_file),
        script:
            "../scripts/reliability_sample.py"

    rule reliability:
        input:
            unpack(reliability_inputs),
        output:
            paths.RELIABILITY,
        params:
            spec=reliability_params,
        resources:
            api=reliability_api,
            runtime=reliability_runtime,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(paths.RELIABILITY),
        script:
            "../scripts/reliability.py"

    rule table4_build:
        input:
            sample=PLAN.reliability_items_file,
            answers=PLAN.reliability_files(),
            paper=PLAN.table4_spec.paper.path,
        output:
            directory(PLAN.table4_dir),
        params:
            spec=spec_param(PLAN.table4_spec),
        resources:
            runtime=10,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(PLAN.table4_dir),
        script:
            "../scripts/table4.py"
