"""LoRA training on CPU: a tiny randomly initialised Qwen2 model with a tokenizer trained here
(nothing downloaded) learns a few steps on the constructed SFT data; the adapter loads with
PEFT, changes the model and generates. Skipped when the optional extra ``sft`` (trl, peft) is
not installed (``make env`` installs it)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="optional extra 'sft' not installed: pip install -e '.[sft]'")
pytest.importorskip("peft", reason="optional extra 'sft' not installed: pip install -e '.[sft]'")

from lecode.config.experiment import Settings  # noqa: E402
from lecode.config.sections import SFTTrainSettings  # noqa: E402
from lecode.pipeline import Plan  # noqa: E402
from lecode.sft.specs import SFTTrainSpec
from lecode.sft.steps.sft_data import run as run_data  # noqa: E402
from lecode.sft.steps.sft_train import run as run_train  # noqa: E402
from lecode.sft.tiny import tiny_model  # noqa: E402
from lecode.specs import file_sha256  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
STEPS = 3


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("sft")
    plan = Plan(Settings.load(REPO / "params.yaml"))
    data_spec = plan.sft.sft_data_spec("keyfact-e")
    run_data(data_spec, out_dir=str(tmp / "data"))
    lines = (tmp / "data/train.jsonl").read_text(encoding="utf-8").splitlines()
    small = tmp / "small.jsonl"
    small.write_text("\n".join(lines[:8]) + "\n", encoding="utf-8")
    texts = [m["content"] for line in lines for m in json.loads(line)["messages"]]
    base = tiny_model(tmp / "base", texts, hidden=32, layers=2, heads=2, kv_heads=1)
    hyper = SFTTrainSettings(
        base_model=str(base),
        devices=1,
        per_device_batch_size=2,
        gradient_accumulation_steps=2,
        max_steps=STEPS,
        learning_rate=1e-3,
        max_length=1024,
    )
    spec = SFTTrainSpec(
        variant="keyfact-e", data=data_spec.digest(), base_model=str(base), hyper=hyper, code="t"
    )
    out = tmp / "train"
    run_train(spec, data=str(small), out_dir=str(out))
    return {"out": out, "base": base, "data": small, "spec": spec.to_json()}


def test_adapter_has_the_papers_lora_shape(trained: dict[str, Any]) -> None:
    cfg = json.loads((trained["out"] / "adapter/adapter_config.json").read_text())
    assert cfg["r"] == 8 and cfg["lora_alpha"] == 16 and cfg["task_type"] == "CAUSAL_LM"
    from safetensors.torch import load_file

    weights = load_file(str(trained["out"] / "adapter/adapter_model.safetensors"))
    b = [w for k, w in weights.items() if "lora_B" in k]
    assert b and any(float(w.abs().max()) > 0 for w in b)  # B starts at zero: it was trained


def test_loss_log_plot_and_provenance(trained: dict[str, Any]) -> None:
    rows = list(csv.DictReader((trained["out"] / "train_log.csv").open(encoding="utf-8")))
    assert [int(r["step"]) for r in rows] == list(range(1, STEPS + 1))
    assert all(math.isfinite(float(r["loss"])) and float(r["loss"]) > 0 for r in rows)
    assert (trained["out"] / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    prov = json.loads((trained["out"] / "provenance.json").read_text())
    assert prov["data"]["sha256"] == file_sha256(trained["data"])
    assert prov["data"]["samples"] == 8
    assert prov["global_steps"] == STEPS
    assert prov["effective_batch_size"] == 4 and prov["world_size"] == 1
    assert prov["hyperparameters"]["lora_r"] == 8
    assert prov["hyperparameters"]["lr_scheduler"] == "cosine"
    assert prov["base_model"]["weights"] and prov["base_model"]["config.json.sha256"]
    assert prov["libraries"]["trl"] and prov["libraries"]["peft"] and prov["libraries"]["torch"]
    assert not (trained["out"] / "checkpoints").exists()


def test_adapter_loads_changes_the_model_and_generates(trained: dict[str, Any]) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(trained["base"]))
    base = AutoModelForCausalLM.from_pretrained(str(trained["base"]))
    line = trained["data"].read_text(encoding="utf-8").splitlines()[0]
    prompt = json.loads(line)["messages"][:-1]
    ids = tok.apply_chat_template(prompt, add_generation_prompt=True, return_tensors="pt")
    ids = ids["input_ids"] if not isinstance(ids, torch.Tensor) else ids
    with torch.no_grad():
        before = base(ids).logits
    model = PeftModel.from_pretrained(base, str(trained["out"] / "adapter"))
    model.eval()
    with torch.no_grad():
        after = model(ids).logits
        out = model.generate(ids, max_new_tokens=6, do_sample=False)
    assert not torch.allclose(before, after)
    assert out.shape[1] > ids.shape[1]


def test_a_wrong_device_count_is_refused(trained: dict[str, Any], tmp_path: Path) -> None:
    from lecode.sft.train import train

    spec = SFTTrainSpec.from_json(trained["spec"])
    spec = spec.model_copy(update={"hyper": spec.hyper.model_copy(update={"devices": 2})})
    with pytest.raises(RuntimeError, match="effective batch"):
        train(spec, data=str(trained["data"]), out_dir=str(tmp_path))
