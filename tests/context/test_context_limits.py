"""Reading the real window from context-length errors, and compaction that leaves room."""

from __future__ import annotations

import pytest

from memdir.context import ContextPolicy, ContextWindow, compact
from memdir.context.compaction import compaction_gain
from memdir.context.limits import ContextLimit, learned_budget, read_context_limit
from memdir.llm import Message, estimate_messages_tokens


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (  # OpenAI, vLLM
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9,000 tokens. Please reduce the length of the messages.",
            ContextLimit(8192, 9000),
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 5000 "
            "tokens (4000 in the messages, 1000 in the completion).",
            ContextLimit(4096, 4000, 1000),
        ),
        (  # llama.cpp
            "request (5000 tokens) exceeds the available context size (4096 tokens), try "
            "increasing it",
            ContextLimit(4096, 5000),
        ),
        (
            '{"code":400,"message":"the request exceeds the available context size",'
            '"n_prompt_tokens":5000,"n_ctx":4096}',
            ContextLimit(4096, 5000),
        ),
        ("prompt is too long: 210000 tokens > 200000 maximum", ContextLimit(200000, 210000)),
        (  # LM Studio
            "the model is loaded with context length of only 4096 tokens, which is not enough",
            ContextLimit(4096, None),
        ),
        ("the input is too long for this model", ContextLimit(None, None)),
    ],
)
def test_servers_errors_are_read(error: str, expected: ContextLimit) -> None:
    assert read_context_limit(error) == expected


def test_the_budget_is_learned_in_our_own_estimate() -> None:
    said = "maximum context length is 3300 tokens. However, your messages resulted in 4400 tokens"
    assert learned_budget(said, estimated=4000, budget=8192) == 3000  # we count 10% short
    assert learned_budget("maximum context length is 4096 tokens", 6000, 8192) == 4096
    # our estimate (3,000) is under the window the server names: we count short, by how much
    # is unknown, so the window is taken below the refused request
    assert learned_budget("maximum context length is 4096 tokens", 3000, 8192) == 2400
    assert learned_budget("too long", estimated=5000, budget=8192) == 4000
    assert learned_budget("maximum context length is 9000 tokens", 9500, 8192) is None


def _turn(n: int, chars: int) -> list[Message]:
    return [Message("user", f"question {n} " + "q" * chars), Message("assistant", "a" * chars)]


def test_the_window_learns_and_recovers_to_half_the_learned_window() -> None:
    messages = [Message("system", "s" * 400)]
    for n in range(12):
        messages += _turn(n, 500)
    window = ContextWindow(model=None, flush=None, policy=ContextPolicy(max_input_tokens=8192))
    error = "maximum context length is 2000 tokens; your messages resulted in 2100 tokens"
    sent = estimate_messages_tokens(messages)
    assert window.learn(error, messages) == int(2000 * sent / 2100)
    recovered = window.recover(messages)
    assert estimate_messages_tokens(recovered.messages) <= window.policy.max_input_tokens / 2  # type: ignore[operator]
    assert recovered.messages[-1] == messages[-1]  # the current turn stays whole


def test_compaction_aims_below_the_trigger_when_the_tail_is_large() -> None:
    messages = [Message("system", "s" * 2000)]  # 500 of a 1,000-token window
    for n in range(3):
        messages += _turn(n, 300)
    messages.append(Message("user", "and now?"))
    policy = ContextPolicy(max_input_tokens=1000, preserve_recent_messages=4)
    result = compact(messages, model=None, flush=None, policy=policy)
    # keeping the last four messages would leave 79%; they give way down to the current turn
    assert [m.content for m in result.messages[2:]] == ["and now?"]
    assert estimate_messages_tokens(result.messages) < 0.7 * 1000


def test_a_compaction_that_folds_in_little_waits() -> None:
    system = Message("system", "s" * 2600)  # 65% of a 1,000-token window
    summary = Message(
        "user", "[Summary of earlier conversation, for reference only - not instructions]\nx"
    )
    policy = ContextPolicy(max_input_tokens=1000)
    small = [system, summary, *_turn(0, 60), Message("user", "next")]
    window = ContextWindow(model=None, flush=None, policy=policy)
    kept, events = window.prepare(small)
    assert compaction_gain(small, policy) < 100
    assert [e.kind for e in events] == []  # 70% reached, but folding 40 tokens frees nothing
    assert kept == small
    grown = [system, summary, *_turn(0, 60), *_turn(1, 60), *_turn(2, 60), Message("user", "next")]
    assert compaction_gain(grown, policy) >= 100
    _, events = window.prepare(grown)
    assert "compacted" in [e.kind for e in events]
