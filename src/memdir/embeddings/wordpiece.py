"""The BERT uncased WordPiece tokenizer of all-MiniLM-L6-v2, built from shipped data.

The vocabulary is package data (``data/vocab.txt``, see ``data/NOTICE``); the
pipeline is assembled from ``tokenizers`` parts so that no ``tokenizer.json`` has
to be downloaded. A test checks that the ids equal those of the model's reference
``tokenizer.json``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.errors import EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
UNK_TOKEN = "[UNK]"
#: sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2.
DEFAULT_MAX_TOKENS = 256
#: The model's position embeddings end here.
MODEL_MAX_TOKENS = 512


def vocabulary_path() -> Path:
    """The shipped ``vocab.txt`` (30,522 WordPiece tokens, one a line)."""
    return Path(str(resources.files("memdir.embeddings").joinpath("data", "vocab.txt")))


def load_wordpiece_tokenizer(
    vocab: Path | None = None, max_tokens: int = DEFAULT_MAX_TOKENS
) -> Tokenizer:
    """Build the lower-casing, accent-stripping BERT tokenizer.

    Each text becomes ``[CLS] pieces... [SEP]``, cut to ``max_tokens`` ids in all.
    Padding is left to the caller, which pads each batch to its own longest text.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    if not 2 < max_tokens <= MODEL_MAX_TOKENS:
        raise EmbeddingError(
            f"max_tokens={max_tokens!r} is out of range; choose 3 to {MODEL_MAX_TOKENS}"
        )
    path = vocab if vocab is not None else vocabulary_path()
    if not path.is_file():
        raise EmbeddingError(
            f"the WordPiece vocabulary {str(path)!r} is missing; "
            "reinstall memdir to restore its package data"
        )
    wordpiece = models.WordPiece.from_file(
        str(path), unk_token=UNK_TOKEN, max_input_chars_per_word=100
    )
    tokenizer = Tokenizer(wordpiece)
    # strip_accents=None follows lowercase, exactly as BERT uncased does.
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls_id, sep_id = _special_id(tokenizer, CLS_TOKEN), _special_id(tokenizer, SEP_TOKEN)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{CLS_TOKEN}:0 $A:0 {SEP_TOKEN}:0",
        pair=f"{CLS_TOKEN}:0 $A:0 {SEP_TOKEN}:0 $B:1 {SEP_TOKEN}:1",
        special_tokens=[(CLS_TOKEN, cls_id), (SEP_TOKEN, sep_id)],
    )
    tokenizer.add_special_tokens([CLS_TOKEN, SEP_TOKEN, UNK_TOKEN, "[PAD]", "[MASK]"])
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return tokenizer


def _special_id(tokenizer: Tokenizer, token: str) -> int:
    token_id = tokenizer.token_to_id(token)
    if token_id is None:
        raise EmbeddingError(
            f"the WordPiece vocabulary lacks the special token {token!r}; "
            "reinstall memdir to restore its package data"
        )
    return token_id
