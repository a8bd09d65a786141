"""The README's streaming example, served as written and read by a real client (http.client):
the CSV report arrives row by row and the client may leave half-way; the tick feed resumes
after the ``Last-Event-ID`` it is sent."""

from __future__ import annotations

import http.client
import os
import re
from pathlib import Path
from typing import Any

from support import serving


def readme_block(language: str) -> str:
    """The first ``language`` block of the README's streaming section."""
    text = Path(os.environ["FERRULE_README"]).read_text()
    start = text.index("### Streaming and Server-Sent Events")
    section = text[start : text.index("\n## ", start)]
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found, f"no {language} block in the README's streaming section"
    return found.group(1)


def test_the_readme_streaming_example_serves_a_report_and_a_resumable_feed() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(readme_block("python"), "README.md", "exec"), namespace)
    with serving(namespace["app"]) as port:
        report = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        report.request("GET", "/report.csv")
        reply = report.getresponse()
        assert (reply.status, reply.getheader("content-type")) == (200, "text/csv; charset=utf-8")
        assert [reply.readline() for _ in range(3)] == [b"id,name\n", b"0,user0\n", b"1,user1\n"]
        report.close()  # half-way: the generator is closed, the server goes on

        feed = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        feed.request("GET", "/ticks", headers={"last-event-id": "41"})
        events = feed.getresponse()
        assert events.getheader("content-type") == "text/event-stream"
        assert [events.readline() for _ in range(4)] == [b"event: tick\n", b"id: 42\n", b'data: {"n":42}\n', b"\n"]
        feed.close()
