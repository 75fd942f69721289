"""`chatcodec.render_isolated`: a child process with a wall-clock deadline and a memory cap, the
hard guarantee the in-process limits cannot give for CPU time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import chatcodec
from chatcodec.errors import TemplateRenderError, TemplateSecurityError

MESSAGES = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]


def template(tmp_path: Path, source: str) -> chatcodec.Codec:
    path = tmp_path / "t.jinja"
    path.write_text(source)
    return chatcodec.load(path)


def test_renders_what_render_renders() -> None:
    codec = chatcodec.load("qwen3")
    expected = codec.render(MESSAGES, add_generation_prompt=True, enable_thinking=False)
    assert chatcodec.render_isolated(codec, MESSAGES, add_generation_prompt=True, enable_thinking=False) == expected


def test_a_template_that_runs_for_ever_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    # Every value is small, so no size limit applies: only time stops it.
    slow = template(tmp_path, "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}done")
    started = time.monotonic()
    with pytest.raises(TemplateSecurityError, match=r"t: rendering took longer than the 1 s time limit"):
        chatcodec.render_isolated(slow, MESSAGES, timeout=1.0)
    assert time.monotonic() - started < 5


def test_memory_past_the_cap_is_refused(tmp_path: Path) -> None:
    # The in-process limits are raised out of the way; the child's address-space cap holds.
    # Eight values of n characters each: far more than the 50 MB allowed, and more than the
    # heap a forked child may inherit free from earlier tests (which it could use without growing).
    parts = "[s ~ 1, s ~ 2, s ~ 3, s ~ 4, s ~ 5, s ~ 6, s ~ 7, s ~ 8]"
    big = template(tmp_path, "{% set s = 'x' * n %}{% set parts = " + parts + " %}{{ parts | map('length') | sum }}")
    with chatcodec.render_limits(chatcodec.RenderLimits(max_value=99_000_000, max_output=10**9)):
        assert big.render(MESSAGES, n=10) == "88"
        with pytest.raises(TemplateSecurityError, match=r"t: the rendering process died|50 MB memory limit"):
            chatcodec.render_isolated(big, MESSAGES, n=30_000_000, memory_mb=50, timeout=20)


def test_errors_of_the_render_itself_keep_their_type_and_message(tmp_path: Path) -> None:
    broken = template(tmp_path, "{{ raise_exception('no system messages') }}")
    with pytest.raises(TemplateRenderError) as in_process:
        broken.render(MESSAGES)
    with pytest.raises(type(in_process.value)) as isolated:
        chatcodec.render_isolated(broken, MESSAGES)
    assert str(isolated.value) == str(in_process.value)
