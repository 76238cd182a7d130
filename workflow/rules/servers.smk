# Before the first job: the API keys of the models the scheduled jobs call are checked. Then
# vLLM servers for `backend: vllm` model entries: started before the first job, stopped when
# the run ends (success or error). Nothing happens when no role uses such an entry, and no
# server is started in replay mode (every response then comes from the store).


onstart:
    check_keys_of_scheduled_jobs()
    if any(SETTINGS.models[n].backend == "vllm" for n in SETTINGS.llm_models()):
        from lecode.llm.cli import serve_start

        for line in serve_start(config):
            print(f"vLLM server {line}", file=sys.stderr)


onsuccess:
    if any(SETTINGS.models[n].backend == "vllm" for n in SETTINGS.llm_models()):
        from lecode.llm.cli import serve_stop

        serve_stop(config)


onerror:
    if any(SETTINGS.models[n].backend == "vllm" for n in SETTINGS.llm_models()):
        from lecode.llm.cli import serve_stop

        serve_stop(config)
