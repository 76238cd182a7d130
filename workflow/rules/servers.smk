# Before the first job: the API keys of the models the scheduled jobs call are checked, and the
# jobs of this run may start vLLM servers for `backend: vllm` model entries on demand
# (LECODE_VLLM_SERVE, which the local executor's jobs inherit): the first job that calls an
# entry starts its server on this host's loopback (one per entry, under a lock; the others
# reuse it), and the hooks below stop every recorded server when the run ends (success or
# error). A job that may start a server has the published SFT adapters that server serves
# among its inputs (adapter_inputs), so no server starts before its adapters are trained.
# Nothing is enabled when no role uses such an entry, or in replay mode (every response then
# comes from the store). Where the hooks do not run (profiles/slurm: no-hooks), a job finds
# only a server already running and otherwise fails naming the entry.
import os


def _uses_vllm():
    return any(SETTINGS.models[n].backend == "vllm" for n in SETTINGS.llm_models())


onstart:
    refuse_beside_dvc_repro()
    check_keys_of_scheduled_jobs()
    if _uses_vllm() and not SETTINGS.replay():
        from lecode.llm.vllm import SERVE_ENV

        os.environ[SERVE_ENV] = str(SETTINGS.llm.servers_path.resolve())


onsuccess:
    if _uses_vllm():
        from lecode.cli.llm import serve_stop_report

        for line in serve_stop_report(SETTINGS.llm):
            print(f"vLLM server {line}", file=sys.stderr)
    report_failed_dialogues(success=True)


onerror:
    if _uses_vllm():
        from lecode.cli.llm import serve_stop_report

        for line in serve_stop_report(SETTINGS.llm):
            print(f"vLLM server {line}", file=sys.stderr)
    report_failed_dialogues(success=False)
