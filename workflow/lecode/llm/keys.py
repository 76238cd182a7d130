"""Cache keys: what makes two LLM requests 'the same request'.

A key is the SHA-256 of the canonical JSON of: model identity (entry name, endpoint identity,
served model id), the full message list, the decoding settings actually sent (seed included,
after the replicate offset), response format, prompt template hash and replicate index.
The API key and request headers never take part.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

KEY_VERSION = 1

Message = Mapping[str, str]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def model_identity(name: str, base_url: str, served_model: str) -> dict[str, str]:
    return {"name": name, "base_url": base_url, "served_model": served_model}


def partition_name(identity: Mapping[str, str]) -> str:
    """A directory name per model identity: readable prefix plus a hash of the identity."""
    digest = hashlib.sha256(canonical_json(dict(identity)).encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", identity["name"])[:40] or "model"
    return f"{slug}-{digest}"


def request_key(
    identity: Mapping[str, str],
    messages: Sequence[Message],
    decoding: Mapping[str, Any],
    *,
    template_hash: str,
    replicate: int,
) -> str:
    payload = {
        "v": KEY_VERSION,
        "model": dict(identity),
        "messages": [dict(m) for m in messages],
        "decoding": dict(decoding),
        "template": template_hash,
        "replicate": replicate,
    }
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()
