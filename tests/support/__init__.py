"""Test support shared by tests/ and benchmarks/ (not part of the shipped ``lecode`` package).

- :mod:`tests.support.cases`: synthetic consultations in the LeCoDe schema;
- :mod:`tests.support.mock_llm`: model entries, runtimes and the consultation loop against the
  mock endpoint (:mod:`lecode.mock`, which stays in the package: ``lecode mock-server``);
- :mod:`tests/support/vllm_standin.py <tests.support.vllm_standin>`: a stand-in for
  ``vllm serve``, run by path (``python tests/support/vllm_standin.py``) so that it works from
  any working directory.

Benchmarks run as ``python benchmarks/x.py`` put the repository root on ``sys.path`` first
(``benchmarks/common.py``).
"""
