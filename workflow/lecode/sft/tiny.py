"""A small randomly initialised chat model, built locally, for plumbing checks of the SFT
training and serving path (the CPU test, ``scripts/gpu_sft_check.sh``): nothing is downloaded.

The tokenizer is a byte-level BPE trained in memory on the given texts with ``tokenizers`` (the
ChatML special tokens added) and saved with a ChatML chat template, so TRL, PEFT and vLLM read
the directory like any Qwen2 checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def bpe_tokenizer(
    texts: Iterable[str], out_dir: str | Path, *, vocab_size: int = 1024, multiple: int = 64
) -> int:
    """Train a byte-level BPE tokenizer on ``texts`` (in memory, deterministic) and save it to
    ``out_dir`` in the form Qwen2's tokenizer class reads; returns the model's vocabulary size
    (padded to a multiple of ``multiple``). Byte-level: any text encodes, nothing is unknown."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(out_dir))
    size = tok.get_vocab_size()
    return size + (-size) % multiple


def tiny_model(
    out_dir: str | Path,
    texts: Iterable[str],
    *,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    kv_heads: int = 1,
    intermediate: int = 128,
    max_positions: int = 8192,
    seed: int = 0,
) -> Path:
    """A random Qwen2 model with a character tokenizer over ``texts``, saved to ``out_dir``."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab = bpe_tokenizer(texts, out)
    tok = AutoTokenizer.from_pretrained(str(out))
    config = Qwen2Config(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(str(out))
    return out
