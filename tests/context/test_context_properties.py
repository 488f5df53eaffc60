"""Property: after any turns and compactions, no message vanishes silently.

Every message gets an id (carried in a parallel list). After each step every
message of the previous list is kept, summarised or dropped, and everything
summarised or dropped was flushed first; tool calls and results stay paired;
the system message stays first; summaries are user messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.context import (
    Compaction,
    ContextPolicy,
    FlushLedger,
    FlushResult,
    SummaryCache,
    compact,
    emergency_compact,
    is_summary_message,
    prepare_context,
)
from memdir.llm import Message, ScriptedChatModel, ToolCall

SYSTEM = Message("system", "You are the agent under test.")
TAG = re.compile(r"^<(m\d+)>")


@dataclass
class World:
    """The conversation, the ids parallel to it, and what happened to every id."""

    policy: ContextPolicy
    messages: list[Message] = field(default_factory=lambda: [SYSTEM])
    ids: list[str] = field(default_factory=lambda: ["system"])
    created: set[str] = field(default_factory=set)
    flushed: list[str] = field(default_factory=list)
    replaced: set[str] = field(default_factory=set)
    ledger: FlushLedger = field(default_factory=FlushLedger)
    cache: SummaryCache = field(default_factory=SummaryCache)
    counter: int = 0

    def flush(self, messages: Sequence[Message]) -> FlushResult:
        for message in messages:
            match = TAG.match(message.content)
            assert match, f"flushed a message that is not a conversation message: {message}"
            self.flushed.append(match.group(1))
        return FlushResult(facts_saved=len(messages))

    def add(self, role: str, words: int, **extra: object) -> None:
        self.counter += 1
        key = f"m{self.counter}"
        content = f"<{key}> " + " ".join(f"{role}{n}" for n in range(words))
        self.messages.append(Message(role, content, **extra))  # type: ignore[arg-type]
        self.ids.append(key)
        self.created.add(key)

    def add_turn(self, words: int, tools: int) -> None:
        self.add("user", words)
        if tools:
            calls = tuple(
                ToolCall(f"call{self.counter}-{n}", "memory_search") for n in range(tools)
            )
            self.add("assistant", 2, tool_calls=calls)
            for call in calls:
                self.add("tool", words, tool_call_id=call.id)
        self.add("assistant", words)

    def apply(self, compaction: Compaction) -> None:
        before, old_ids = self.messages, self.ids
        gone = (*compaction.summarised_indices, *compaction.dropped_indices)
        assert sorted((*compaction.kept_indices, *gone)) == list(range(len(before)))
        for index in gone:
            key = old_ids[index]
            assert key != "system"
            assert key.startswith("summary") or key in self.flushed, f"{key} lost unflushed"
            self.replaced.add(key)
        new_ids = [old_ids[i] for i in compaction.kept_indices]
        if compaction.summary_index is not None:
            summary = compaction.messages[compaction.summary_index]
            assert is_summary_message(summary)
            new_ids.insert(compaction.summary_index, f"summary{self.counter}-{len(self.replaced)}")
        assert len(new_ids) == len(compaction.messages)
        for position, key in enumerate(new_ids):
            if key in old_ids and key != "system":
                original = before[old_ids.index(key)]
                assert compaction.messages[position].role == original.role
                assert compaction.messages[position].tool_calls == original.tool_calls
        self.messages, self.ids = list(compaction.messages), new_ids
        self.check()

    def check(self) -> None:
        assert self.messages[0] == SYSTEM
        assert [m.role for m in self.messages].count("system") == 1
        called = {c.id for m in self.messages for c in m.tool_calls}
        answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
        assert called == answered
        present = {key for key in self.ids if key.startswith("m")}
        assert self.created == present | (self.replaced & self.created)
        assert not present & self.replaced
        assert len(self.flushed) == len(set(self.flushed)), "a message was flushed twice"


turn = st.tuples(st.just("turn"), st.integers(1, 80), st.integers(0, 2))
step = st.one_of(
    turn,
    turn,
    st.tuples(st.just("compact"), st.booleans(), st.just(0)),
    st.tuples(st.just("emergency"), st.just(0), st.just(0)),
    st.tuples(st.just("prepare"), st.booleans(), st.just(0)),
)
policies = st.builds(
    ContextPolicy,
    max_input_tokens=st.integers(300, 3000),
    preserve_recent_messages=st.integers(0, 8),
    preserve_recent_pairs=st.one_of(st.none(), st.integers(1, 3)),
    summary_max_tokens=st.integers(20, 200),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies, steps=st.lists(step, min_size=1, max_size=25))
def test_no_message_vanishes_silently(
    policy: ContextPolicy, steps: list[tuple[str, int, int]]
) -> None:
    world = World(policy)
    model = ScriptedChatModel(lambda messages, tools, schema: "summary of the earlier turns")
    for kind, first, second in steps:
        if kind == "turn":
            world.add_turn(first, second)
            world.check()
        elif kind == "compact":
            chosen = model if first else None
            world.apply(
                compact(
                    world.messages,
                    model=chosen,
                    flush=world.flush,
                    policy=policy,
                    cache=world.cache,
                    ledger=world.ledger,
                )
            )
        elif kind == "emergency":
            calls = len(model.calls)
            world.apply(
                emergency_compact(world.messages, policy, flush=world.flush, ledger=world.ledger)
            )
            assert len(model.calls) == calls
        else:
            prepared, events = prepare_context(
                world.messages,
                model=model if first else None,
                flush=world.flush,
                ledger=world.ledger,
                policy=policy,
                cache=world.cache,
            )
            for event in events:
                if event.compaction is not None:
                    world.apply(event.compaction)
            assert prepared == world.messages
