"""The mock endpoint's dataset annotator: it reads the dialogue back from the prompt of each
annotation step (:mod:`lecode.corpus.prompting`) and answers with what the offline rules
(:mod:`lecode.corpus.rules`) make of it, in the JSON the prompts ask for."""

from __future__ import annotations

import json

from lecode.corpus import rules
from lecode.corpus.annotations import SPEAKER_ZH
from lecode.corpus.prompting import read_roles, read_stage1, read_transcript
from lecode.mock.players import text_after


def play_annotator(purpose: str, prompt: str) -> str:
    """The reply to one annotation request (``purpose``: roles, stage1 or stage2)."""
    if purpose == "roles":
        found = rules.identify_roles(read_transcript(text_after(prompt, "【转写文本】")))
        reply: dict[str, object] = {"roles": {k: SPEAKER_ZH[v] for k, v in found.roles.items()}}
    elif purpose == "stage1":
        s1 = rules.stage1(read_roles(text_after(prompt, "【角色标注后的对话】")))
        reply = {
            "dialogue": [
                {"speaker": SPEAKER_ZH[u.speaker], "text": u.text, "intent": u.intent}
                for u in s1.dialogue
            ],
            "edits": list(s1.edits),
        }
    elif purpose == "stage2":
        s2 = rules.stage2(read_stage1(text_after(prompt, "【规范化对话】")))
        reply = {
            "initial_query": s2.initial_query,
            "facts": [{"fact": f.text, "importance": f.importance} for f in s2.facts],
            "suggestion": s2.suggestion,
            "case_type": list(s2.case_type),
        }
    else:
        return "好的。"
    return json.dumps(reply, ensure_ascii=False)
