"""Supervised fine-tuning data and LoRA training (paper section 3.5, appendix D.1.3).

- :mod:`lecode.sft.dialogues`: the three training-dialogue strategies (Direct SFT from the real
  dialogues; Key-fact and Key-fact-e SFT from targeted questions) and their rendering into
  chat samples with the zero-shot expert prompt, exactly as the evaluation prompts the model;
- :mod:`lecode.sft.questions`: the question writers (offline template writer, LLM writer) and
  the validation of their questions;
- :mod:`lecode.sft.build`: one variant's JSONL, audit records and statistics;
- :mod:`lecode.sft.train`: LoRA training with TRL + PEFT (optional extra ``sft``).
"""
