"""The README runs as written.

Every ```python block and every command of every ```sh block of README.md runs, in the README's
order, from a directory laid out like a clone (the repository's files linked, a fresh `results/`)
with ../shared beside it, so that nothing is written into the repository. `ssdlab …` runs as
`sys.executable -m ssdlab …` (through bash, so quoting, `~` and `$(…)` work as written), Python
blocks as `sys.executable -c BLOCK`; a ```toml block whose first line is `# NAME.toml` is written
to NAME.toml (the file the commands after it use). Afterwards every path the blocks name
(`results/…`, `../shared/…`, `out.json`, …) exists, and so does every repository path the prose
names (`docs/config.md`, `crates/…`).

A block that must not run (it builds, installs, or needs a cluster) has the line
`<!-- readme-test: skip -->` (with its reason in the comment or around it) before it; any other
shell command but `ssdlab …` and a file written with `cat > FILE <<'END'` is an error here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHARED = ROOT.parent / "shared"
SKIP = "<!-- readme-test: skip"
# Setting up the shell, which the test does itself: `ssdlab` is defined for every command.
SETUP = {"source .venv/bin/activate"}
FENCE = re.compile(r"^```(\w*)\s*$")
SHELL = {"sh", "bash", "shell"}
PYTHON = {"python", "py"}
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
WRITES_FILE = re.compile(r"^cat\s+>\s*\S+\s+<<")
# Paths a block names: results and shared files (comments included), and outside comments file
# names with the extensions the tour uses.
BLOCK_PATH = re.compile(r"(?<![\w/.~-])((?:\.\./shared|results)(?:/[\w.+-]+)+)")
FILE_NAME = re.compile(r"(?<![\w/.~-])([\w-]+\.(?:json|toml|csv|ssdt|png|svg|pdf|html|gz))(?![\w/-])")
COMMENT = re.compile(r"(^|\s)#.*$", re.M)
# Repository paths the prose names: markdown links and `top-level-folder/...` in backticks.
PROSE_PATH = re.compile(r"\]\(([^)#:\s]+)\)|`((?:crates|python|tests|benches|docs|fuzz)/[^`\s]*)`")


@dataclass
class Block:
    lang: str
    line: int  # the README line of the block's first line of content
    text: str
    skip: bool


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a markdown text, each marked skip when the last non-blank line
    before its fence is a skip marker."""
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        before = next((s.strip() for s in reversed(lines[:i]) if s.strip()), "")
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        out.append(Block(m.group(1), i + 2, "\n".join(lines[i + 1 : end]) + "\n", before.startswith(SKIP)))
        i = end + 1
    return out


def shell_commands(block: Block) -> list[tuple[int, str]]:
    """(README line, command) for each command of a shell block, as written: with its
    continuation lines and its here-document; blank and comment lines dropped."""
    lines = block.text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        start = i
        cmd = lines[i]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd += "\n" + lines[i]
        if m := HEREDOC.search(cmd):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == m.group(2)), None)
            assert end is not None, f"README.md:{block.line + start}: the here-document `{m.group(2)}` does not end"
            cmd = "\n".join([cmd, *lines[i + 1 : end + 1]])
            i = end
        i += 1
        if cmd.strip() and not cmd.lstrip().startswith("#"):
            out.append((block.line + start, cmd))
    return out


def the_readme() -> str:
    return README.read_text()


SAMPLE = """# Title

```sh
ssdlab run --set a=1   # a comment
# a comment line

cat > x.toml <<'END'
[run]
seed = 1
END
ssdlab run --config x.toml \\
  --set b=2
```

<!-- readme-test: skip (why) -->

```sh
make all
```

```python
print(1)
```
"""


def test_blocks_and_commands_are_read_as_written():
    bs = blocks(SAMPLE)
    assert [(b.lang, b.line, b.skip) for b in bs] == [("sh", 4, False), ("sh", 18, True), ("python", 22, False)]
    assert bs[2].text == "print(1)\n"
    assert shell_commands(bs[0]) == [
        (4, "ssdlab run --set a=1   # a comment"),
        (7, "cat > x.toml <<'END'\n[run]\nseed = 1\nEND"),
        (11, "ssdlab run --config x.toml \\\n  --set b=2"),
    ]


def test_the_readme_has_blocks_that_run():
    bs = [b for b in blocks(the_readme()) if not b.skip]
    commands = [c for b in bs if b.lang in SHELL for _, c in shell_commands(b)]
    assert sum(c.startswith("ssdlab ") for c in commands) >= 10
    assert any(b.lang in PYTHON for b in bs)


@pytest.mark.skipif(not (SHARED / "traces").is_dir(), reason="../shared/traces is not beside the repository")
def test_readme_runs_as_written(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for entry in ROOT.iterdir():
        if entry.name != "results":
            (repo / entry.name).symlink_to(entry)
    (tmp_path / "shared").symlink_to(SHARED)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "SSDLAB_PYTHON": sys.executable, "NO_COLOR": "1"}
    env.pop("SSDLAB_TRACES", None)
    define = 'ssdlab() { "$SSDLAB_PYTHON" -m ssdlab "$@"; }\n'

    def check(what: str, line: int, p: subprocess.CompletedProcess) -> None:
        assert p.returncode == 0, (
            f"README.md:{line}: {what} exited with {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
        )
        assert "Traceback" not in p.stderr, f"README.md:{line}: {what} printed a traceback\n{p.stderr[-3000:]}"

    ran: list[Block] = []
    for b in blocks(the_readme()):
        if b.skip or b.lang not in SHELL | PYTHON | {"toml"}:
            continue
        ran.append(b)
        if b.lang == "toml":
            first = b.text.splitlines()[0]
            if m := re.fullmatch(r"#\s*([\w.-]+\.toml)\s*", first):
                (repo / m.group(1)).write_text(b.text)
        elif b.lang in PYTHON:
            p = subprocess.run([sys.executable, "-c", b.text], cwd=repo, env=env, capture_output=True, text=True)
            check("this Python block", b.line, p)
        else:
            for line, cmd in shell_commands(b):
                if cmd.strip() in SETUP:
                    continue
                assert cmd.startswith("ssdlab ") or WRITES_FILE.match(cmd), (
                    f"README.md:{line}: `{cmd.splitlines()[0]}` is not an ssdlab command; if its block "
                    f"must not run, put `{SKIP} (why) -->` before the block"
                )
                p = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", define + cmd],
                    cwd=repo,
                    env=env,
                    capture_output=True,
                    text=True,
                )
                check(f"`{cmd.splitlines()[0]}`", line, p)

    missing = sorted(
        {
            f"README.md:{b.line}: {path}"
            for b in ran
            for path in [*BLOCK_PATH.findall(b.text), *FILE_NAME.findall(COMMENT.sub("", b.text))]
            if not (repo / path.rstrip(".")).exists()
        }
    )
    assert not missing, "paths the README names that its commands did not make:\n" + "\n".join(missing)


def test_repository_paths_in_the_readme_exist():
    missing = []
    for m in PROSE_PATH.finditer(the_readme()):
        path = (m.group(1) or m.group(2)).rstrip(".,")
        if not path.startswith(("http", "mailto")) and not (ROOT / path).exists():
            missing.append(path)
    assert not missing, f"README.md names paths that do not exist: {missing}"
