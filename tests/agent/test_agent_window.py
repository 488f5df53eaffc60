"""A model whose real window is smaller than configured, and a window too small for the
seeded prompt: the chat learns the real window from the first context-length error, and
compaction leaves room instead of running on every turn."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from agent_support import chatty_brain

from memdir.agent import ChatAgent
from memdir.context import is_summary_message
from memdir.context.summary import SUMMARY_INSTRUCTIONS
from memdir.embeddings.base import HashEmbedder
from memdir.errors import ContextLengthError
from memdir.llm import Completion, Message, ScriptedChatModel, ToolSpec, estimate_messages_tokens
from memdir.memory import Memory

REAL = 3300
CONFIGURED = 8192


def _turns(count: int) -> list[str]:
    return [
        f"Message {n}: tell me more about the harbour, the boats and the tides."
        for n in range(count)
    ]


def _chat(memory: Memory, model: ScriptedChatModel, count: int) -> list[list[str]]:
    """Send ``count`` messages; the event kinds of each turn (every turn must answer)."""
    kinds = []
    with ChatAgent(memory, model, session_id=f"s{len(model.calls)}") as agent:
        for text in _turns(count):
            turn = agent.send(text)
            assert turn.reply.startswith("About 'Message"), turn.reply
            kinds.append([event.kind for event in turn.events])
    return kinds


def test_a_model_smaller_than_configured_answers_every_turn(bare_memory: Memory) -> None:
    model = ScriptedChatModel(chatty_brain(600), context_window=CONFIGURED, accepts_tokens=REAL)
    kinds = _chat(bare_memory, model, 24)
    emergencies = [k.count("emergency") for k in kinds]
    assert max(emergencies) <= 1  # at most one emergency compaction in any turn
    assert sum(emergencies) == 1  # once learned, the window holds: no more refusals
    refused = [c for c in model.calls if estimate_messages_tokens(c.messages) > REAL]
    assert len(refused) == 1
    assert "compacted" in {kind for turn in kinds for kind in turn}  # compaction took over


def test_the_learned_window_is_said_and_kept_for_the_next_chat(bare_memory: Memory) -> None:
    model = ScriptedChatModel(chatty_brain(600), context_window=CONFIGURED, accepts_tokens=REAL)
    with ChatAgent(bare_memory, model) as agent:
        texts = []
        for text in _turns(24):
            texts += [e.text for e in agent.send(text).events if e.kind == "emergency"]
        assert len(texts) == 1
        assert f"the model accepts about {REAL:,} tokens, not {CONFIGURED:,}" in texts[0]
        rows = dict(agent.status().rows())
    assert rows["context window"] == (
        f"{REAL:,} (learned from a context-length error; configured {CONFIGURED:,})"
    )
    kept = json.loads((bare_memory.home / "state" / "context-windows.json").read_text())
    assert kept["scripted/scripted"]["learned"] == REAL
    again = ScriptedChatModel(chatty_brain(600), context_window=CONFIGURED, accepts_tokens=REAL)
    kinds = _chat(bare_memory, again, 24)
    assert not any("emergency" in turn for turn in kinds)  # the next chat starts from it
    other = ScriptedChatModel(chatty_brain(600), context_window=16_384)
    with ChatAgent(bare_memory, other) as agent:  # another configured window forgets it
        assert agent.status().window == 16_384


def test_an_error_without_numbers_still_converges(bare_memory: Memory) -> None:
    answer = chatty_brain(600)

    def terse_server(
        messages: Sequence[Message], tools: Sequence[ToolSpec] | None, schema: Any
    ) -> str | Completion:
        if estimate_messages_tokens(messages) > REAL:
            raise ContextLengthError("the input is too long for this model")
        return answer(messages, tools, schema)

    model = ScriptedChatModel(terse_server, context_window=CONFIGURED)
    kinds = _chat(bare_memory, model, 30)
    emergencies = [k.count("emergency") for k in kinds]
    assert max(emergencies) <= 1
    assert sum(emergencies) <= 3  # each refusal shrinks the window by a fifth at least
    assert "emergency" not in kinds[-1]
    assert "emergency" not in kinds[-2]


# -- hysteresis: a window the system prompt nearly fills ---------------------------------


class Curator:
    """The Memory's model: answers summaries (counted) and flushes (no facts)."""

    def __init__(self) -> None:
        self.summaries = 0

    def __call__(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        schema: Mapping[str, Any] | None,
    ) -> str:
        if schema is not None:
            if "action" in schema["properties"]:
                return '{"action": "add"}'
            if "facts" in schema["properties"] and "should_update" not in schema["properties"]:
                return '{"facts": []}'
            return '{"should_update": false, "reason": "small talk"}'
        assert messages[0].content.startswith(SUMMARY_INSTRUCTIONS[:40])
        self.summaries += 1
        return "They talked about the harbour, the boats and the tides; nothing was decided."


@pytest.mark.parametrize("window", [4000, 5000])
def test_ten_turns_in_the_compaction_band_cost_at_most_two_summaries(
    home: Path, window: int
) -> None:
    """The seeded prompt takes most of a small window: after a compaction the context is
    still above the trigger, and a compaction on every turn would fold in one turn each."""
    curator = Curator()
    overrides = {"prompt": {"recent_notes_days": 0}}
    with Memory.open(
        home, embedder=HashEmbedder(), chat_model=ScriptedChatModel(curator), overrides=overrides
    ) as memory:
        memory.init()
        model = ScriptedChatModel(chatty_brain(160), context_window=window)
        with ChatAgent(memory, model) as agent:
            ratios = []
            for text in _turns(40):
                before = curator.summaries
                agent.send(text)
                status = agent.status()
                ratios.append((status.tokens / status.window, curator.summaries - before))
    in_band = [(ratio, made) for ratio, made in ratios if 0.70 <= ratio < 0.90]
    assert len(in_band) >= 10, ratios
    for start in range(len(in_band) - 9):
        assert sum(made for _, made in in_band[start : start + 10]) <= 2, in_band
    assert curator.summaries >= 1  # compaction did run
    sent = [estimate_messages_tokens(call.messages) for call in model.calls]
    assert max(sent) < 0.90 * window  # no request reached the prune level


def test_compaction_still_keeps_the_current_turn_whole(bare_memory: Memory) -> None:
    model = ScriptedChatModel(chatty_brain(600), context_window=1400)
    with ChatAgent(bare_memory, model) as agent:
        for text in _turns(8):
            agent.send(text)
        assert is_summary_message(agent.messages[0])
        users = [m.content for m in agent.messages if m.role == "user"]
        assert users[-1] == _turns(8)[-1]
