"""The built wheel works on its own: installed into a fresh virtual environment, it renders the
bundled templates (shipped inside it) exactly as the source tree does, through the API and the
``chatcodec`` console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import chatcodec

REPO = Path(__file__).resolve().parents[1]

CONVERSATION = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Zürich? 🌧"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"temp_c": 11}'},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
}

# pip and build say these when the package index cannot be reached: then the test cannot run here.
OFFLINE_SIGNS = (
    "No matching distribution found",
    "Could not find a version that satisfies",
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ConnectTimeoutError",
)

RENDER_ALL = """
import json, sys
import chatcodec
conversation = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps({
    "file": chatcodec.__file__,
    "renders": {
        name: chatcodec.load(name).render(
            conversation["messages"], tools=conversation["tools"], add_generation_prompt=True
        )
        for name in chatcodec.bundled_template_names()
    },
}))
"""


def clean_env() -> dict[str, str]:
    # Nothing from the source tree may leak into the installed environment.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONIOENCODING="utf-8")
    return env


def run_or_skip(command: list[str], what: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=clean_env(), timeout=300)
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if any(sign in output for sign in OFFLINE_SIGNS):
            pytest.skip(f"{what} needs the package index, which cannot be reached: {output.strip()[-300:]}")
        pytest.fail(f"{what} failed:\n{output[-3000:]}")
    return done


def build_wheel(out: Path) -> Path:
    try:
        import build  # noqa: F401

        command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)]
    except ImportError:
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(REPO)]
    run_or_skip(command, "building the wheel", out)
    wheels = sorted(out.glob("chatcodec-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the bin folder of a fresh venv it is installed in)."""
    root = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(root)
    venv = root / "venv"
    run_or_skip([sys.executable, "-m", "venv", str(venv)], "creating a venv", root)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    run_or_skip([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)], "installing the wheel", root)
    return wheel, bin_dir


@pytest.mark.slow
def test_wheel_ships_templates_grammars_and_the_script(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(name).decode() for name in names if name.endswith("entry_points.txt"))
    for template in sorted((REPO / "templates").glob("*.jinja")):
        assert f"chatcodec/templates/{template.name}" in names
    for grammar in sorted((REPO / "grammars").glob("*.lark")):
        assert f"chatcodec/grammars/{grammar.name}" in names
    assert "chatcodec = chatcodec.cli:main" in entry_points


@pytest.mark.slow
def test_installed_api_renders_like_the_source_tree(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, bin_dir = installed
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION, ensure_ascii=False), encoding="utf-8")
    script = tmp_path / "render_all.py"
    script.write_text(RENDER_ALL, encoding="utf-8")
    done = run_or_skip([str(bin_dir / "python"), str(script), str(conversation)], "rendering from the venv", tmp_path)
    result = json.loads(done.stdout)
    assert Path(result["file"]).is_relative_to(bin_dir.parent), result["file"]
    expected = {
        name: chatcodec.load(name).render(
            CONVERSATION["messages"], tools=CONVERSATION["tools"], add_generation_prompt=True
        )
        for name in chatcodec.bundled_template_names()
    }
    assert result["renders"] == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen3", "deepseek", "llama3_hermes"])
def test_installed_console_script_renders_like_the_source_tree(
    installed: tuple[Path, Path], tmp_path: Path, name: str
) -> None:
    _, bin_dir = installed
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION, ensure_ascii=False), encoding="utf-8")
    command = [str(bin_dir / "chatcodec"), "render", "--template", name, "--add-generation-prompt", str(conversation)]
    done = subprocess.run(command, capture_output=True, cwd=tmp_path, env=clean_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    expected = chatcodec.load(name).render(
        CONVERSATION["messages"], tools=CONVERSATION["tools"], add_generation_prompt=True
    )
    assert done.stdout.decode("utf-8") == expected
