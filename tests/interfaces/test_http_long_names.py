"""Names at the length limit memdir accepts (255 bytes), written and read over REST."""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.parametrize("stem", ["a" * 252, "\u00e9" * 126, "\u00e9" * 125 + "b"])
def test_a_name_of_up_to_255_bytes_is_written_and_read_back(api: httpx.Client, stem: str) -> None:
    path = f"memory/{stem}.md"
    assert len(path.removeprefix("memory/").encode()) <= 255
    written = api.put(f"/api/v1/files/{path}", json={"content": "# Long\n\nthe long name\n"})
    assert written.status_code == 200, written.text
    read = api.get(f"/api/v1/files/{path}")
    assert read.json()["content"] == "# Long\n\nthe long name\n"
    edited = api.patch(f"/api/v1/files/{path}", json={"old_text": "long name", "new_text": "name"})
    assert edited.status_code == 200, edited.text
    assert api.delete(f"/api/v1/files/{path}").status_code == 200


def test_a_name_over_255_bytes_is_refused_naming_the_limit(api: httpx.Client) -> None:
    answer = api.put(f"/api/v1/files/memory/{'a' * 253}.md", json={"content": "x\n"})
    assert answer.status_code == 400, answer.text
    assert "longer than 255 bytes" in answer.json()["detail"]
