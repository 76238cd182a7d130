# vLLM servers for `backend: vllm` model entries: started before the first job, stopped when
# the run ends (success or error). Nothing happens when no role uses such an entry, and no
# server is started in replay mode (every response then comes from the store).
from lecode.llm import vllm as lecode_vllm
from lecode.llm.runtime import replay_forced


def used_models():
    names = [e["model"] for e in config["experts"]]
    names += [config[r]["model"] for r in ("client", "matcher", "judge") if config.get(r)]
    return names


def vllm_servers_dir():
    llm = config.get("llm") or {}
    if llm.get("servers_dir"):
        return Path(llm["servers_dir"])
    return Path(llm.get("store_dir", "store/responses")).parent / "servers"


def start_vllm_servers():
    if (config.get("llm") or {}).get("replay") or replay_forced():
        return
    specs = lecode_vllm.specs_to_serve(config["models"], used_models())
    try:
        for spec in specs:
            state = lecode_vllm.start_server(spec, vllm_servers_dir(), log_dir="logs/vllm")
            print(f"vLLM server {spec.name}: {state.base_url}", file=sys.stderr)
    except Exception:
        lecode_vllm.stop_all(vllm_servers_dir())
        raise


def stop_vllm_servers():
    for name in lecode_vllm.stop_all(vllm_servers_dir()):
        print(f"stopped vLLM server {name}", file=sys.stderr)


onstart:
    start_vllm_servers()


onsuccess:
    stop_vllm_servers()


onerror:
    stop_vllm_servers()
