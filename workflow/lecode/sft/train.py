"""LoRA fine-tuning of a base model on one SFT variant's data, with TRL and PEFT.

Needs the optional extra ``sft`` (``pip install -e '.[sft]'``: trl, peft, accelerate,
datasets); nothing here is imported by the data stage.

Each line of the data (``{"messages": [...]}``, the last message the target) becomes a
conversational prompt-completion example, so the loss covers only the target reply: each
sample is exactly "dialogue so far -> next lawyer utterance". Hyperparameters come from
``sft.train`` (the paper's: LoRA r=8, alpha=16; 4 per device x 4 accumulation steps x 4 GPUs =
64; cosine schedule from 1e-5 with 10% warmup; 3 epochs). With ``devices > 1`` the step runs
itself under ``torchrun`` (one process per GPU); the effective batch is checked against the
processes actually running.

Outputs (directory of the job): ``adapter/`` (PEFT adapter: ``adapter_config.json``,
``adapter_model.safetensors``; what ``vllm serve --enable-lora --lora-modules`` loads),
``train_log.csv`` (step, epoch, loss, learning rate, grad norm), ``loss.png`` and
``provenance.json`` (data hash, base model identity, hyperparameters, library versions, the
world size and the wall time).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, cast

from lecode.sft.specs import SFTTrainSpec
from lecode.specs import file_sha256

ADAPTER = "adapter"
LOG = "train_log.csv"
PLOT = "loss.png"
PROVENANCE = "provenance.json"
LIBRARIES = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "tokenizers")
LOG_FIELDS = ("step", "epoch", "loss", "learning_rate", "grad_norm", "num_tokens")


class TrainingUnavailable(RuntimeError):
    """The optional training libraries are not installed."""


def require_libraries() -> None:
    missing = []
    for name in ("trl", "peft", "accelerate", "datasets"):
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        raise TrainingUnavailable(
            f"SFT training needs {', '.join(missing)}: install the extra with "
            "`pip install -e '.[sft]'` (or `make env-sft`)"
        )


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = ""
    return out


def _quick_hash(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 of a weights file's size, first and last MiB (hashing 15 GB per run is too
    slow; a different checkpoint differs there)."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        h.update(f.read(chunk))
        if size > chunk:
            f.seek(max(chunk, size - chunk))
            h.update(f.read(chunk))
    return h.hexdigest()


def base_model_identity(path: str | Path) -> dict[str, Any]:
    """What identifies the base model: its config and tokenizer by content, its weight files
    by size and a hash of their first and last MiB."""
    p = Path(path)
    out: dict[str, Any] = {"path": str(path)}
    config = p / "config.json"
    if config.is_file():
        cfg = json.loads(config.read_text(encoding="utf-8"))
        out["architectures"] = cfg.get("architectures")
        out["name_or_path"] = cfg.get("_name_or_path", "")
    for name in (
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
    ):
        f = p / name
        if f.is_file():
            out[f"{name}.sha256"] = file_sha256(f)
    weights = sorted(p.glob("*.safetensors")) + sorted(p.glob("*.bin"))
    out["weights"] = {
        w.name: {"bytes": w.stat().st_size, "head_tail_sha256": _quick_hash(w)} for w in weights
    }
    return out


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def _world() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def write_log(rows: list[dict[str, Any]], out_dir: Path) -> list[dict[str, Any]]:
    """The training steps of ``trainer.state.log_history`` as CSV; returns the rows written."""
    steps = [r for r in rows if "loss" in r]
    with open(out_dir / LOG, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=LOG_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in steps:
            w.writerow({k: r.get(k, "") for k in LOG_FIELDS})
    return steps


def plot_loss(steps: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    xs = [r["step"] for r in steps]
    ax.plot(xs, [r["loss"] for r in steps], marker="." if len(xs) < 50 else None, label="loss")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.set_title(title)
    if steps and "learning_rate" in steps[0]:
        ax2 = ax.twinx()
        ax2.plot(xs, [r.get("learning_rate", 0) for r in steps], color="tab:orange", alpha=0.6)
        ax2.set_ylabel("learning rate")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def load_examples(data: str | Path) -> list[dict[str, Any]]:
    """Chat samples -> conversational prompt-completion examples (loss on the last message)."""
    out = []
    with open(data, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            messages = json.loads(line)["messages"]
            if not messages or messages[-1]["role"] != "assistant":
                raise ValueError(f"{data}:{n}: the last message must be the assistant's reply")
            out.append({"prompt": messages[:-1], "completion": messages[-1:]})
    if not out:
        raise ValueError(f"{data}: no training samples")
    return out


def train(spec: SFTTrainSpec, *, data: str, out_dir: str) -> dict[str, Any]:
    """Train in this process (one rank of a torchrun launch, or alone); rank 0 writes."""
    require_libraries()
    import torch
    from datasets import Dataset
    from peft import LoraConfig, PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed
    from trl import SFTConfig, SFTTrainer

    h = spec.hyper
    world = _world()
    if world != h.devices:
        per_process = h.per_device_batch_size * h.gradient_accumulation_steps
        raise RuntimeError(
            f"sft.train.devices is {h.devices} but {world} training process(es) run: the "
            f"effective batch would be {per_process * world}, not {per_process * h.devices}"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    set_seed(h.seed)
    started = time.time()
    cuda = torch.cuda.is_available()
    bf16 = bool(h.bf16 and cuda and torch.cuda.is_bf16_supported())
    tokenizer = AutoTokenizer.from_pretrained(spec.base_model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        spec.base_model, dtype=torch.bfloat16 if bf16 else torch.float32
    )
    examples = load_examples(data)
    target = h.target_modules if isinstance(h.target_modules, str) else list(h.target_modules)
    peft_config = LoraConfig(
        r=h.lora_r,
        lora_alpha=h.lora_alpha,
        lora_dropout=h.lora_dropout,
        target_modules=target,
        task_type="CAUSAL_LM",
    )
    args = SFTConfig(
        output_dir=str(out / "checkpoints"),
        per_device_train_batch_size=h.per_device_batch_size,
        gradient_accumulation_steps=h.gradient_accumulation_steps,
        learning_rate=h.learning_rate,
        lr_scheduler_type=h.lr_scheduler,
        warmup_steps=h.warmup_ratio,
        num_train_epochs=h.epochs,
        max_steps=h.max_steps if h.max_steps is not None else -1,
        logging_steps=h.logging_steps,
        logging_first_step=True,
        seed=h.seed,
        data_seed=h.seed,
        bf16=bf16,
        use_cpu=not cuda,
        max_length=h.max_length,
        completion_only_loss=True,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(examples),
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    result = trainer.train()
    if _rank() != 0:
        return {}
    adapter = out / ADAPTER
    cast(PeftModel, trainer.model).save_pretrained(str(adapter))  # peft_config made it one
    tokenizer.save_pretrained(str(adapter))
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    steps = write_log(trainer.state.log_history, out)
    plot_loss(steps, out / PLOT, f"{spec.variant} SFT (LoRA r={h.lora_r})")
    seconds = time.time() - started
    prov = {
        "spec": spec.digest(),
        "variant": spec.variant,
        "data": {"path": str(data), "sha256": file_sha256(data), "samples": len(examples)},
        "data_spec": spec.data,
        "base_model": base_model_identity(spec.base_model),
        "hyperparameters": h.model_dump(mode="json"),
        "effective_batch_size": h.per_device_batch_size * h.gradient_accumulation_steps * world,
        "world_size": world,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "bf16": bf16,
        "global_steps": trainer.state.global_step,
        "train_loss": result.training_loss,
        "final_loss": steps[-1]["loss"] if steps else None,
        "seconds": round(seconds, 1),
        "seconds_per_step": round(seconds / max(1, trainer.state.global_step), 3),
        "libraries": library_versions(),
        "code": spec.code,
    }
    (out / PROVENANCE).write_text(json.dumps(prov, ensure_ascii=False, indent=2) + "\n")
    return prov


def launch(spec: SFTTrainSpec, *, data: str, out_dir: str) -> None:
    """Train with ``spec.hyper.devices`` processes: in this process for one device, else under
    ``torchrun`` (the spec travels as a JSON file beside the outputs)."""
    devices = spec.hyper.devices
    if devices == 1 or "LOCAL_RANK" in os.environ:
        train(spec, data=data, out_dir=out_dir)
        return
    require_libraries()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec_file = out / "spec.json"
    spec_file.write_text(spec.to_json(), encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={devices}",
        "-m",
        "lecode.sft.train",
        str(spec_file),
        str(data),
        str(out),
    ]
    subprocess.run(cmd, check=True)
    spec_file.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m lecode.sft.train SPEC.json DATA.jsonl OUT_DIR", file=sys.stderr)
        return 2
    spec = SFTTrainSpec.from_json(Path(args[0]).read_text(encoding="utf-8"))
    train(spec, data=args[1], out_dir=args[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
