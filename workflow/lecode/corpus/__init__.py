"""Building a LeCoDe dataset from consultation transcripts (paper section 3.2, appendix E).

transcripts -> role identification -> stage 1 (standardisation, intents) -> stage 2 (initial
query, atomic key facts with importance, advice summary) -> human review round trip ->
agreement report -> LeCoDe JSONL train/test split with Table 2 statistics.
"""
