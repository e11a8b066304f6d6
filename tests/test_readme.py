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

A block without a language is either a command's output, marked by the line
`<!-- readme-output: PREFIX -->` before it, where PREFIX begins a command of an earlier shell
block (the first that does): each of its lines must be a line that command prints, in order (the
README may quote a few of them); or `<!-- readme-output: skip (why) -->` for one too costly to
run here; or `<!-- readme-text: … -->`, a diagram. Regenerate the output blocks after a change of
results with

    PYTHONPATH=python .venv/bin/python tests/test_readme.py --update

(`make readme`), which runs those commands and rewrites each quoted line with the line of the
same name (its first word) that the command prints now.
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
OUTPUT = re.compile(r"^<!-- readme-output: (.*?) -->$")
TEXT = "<!-- readme-text:"
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
    marker: str = ""  # the last non-blank line before the fence


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
        body = "\n".join(lines[i + 1 : end]) + "\n"
        out.append(Block(m.group(1), i + 2, body, before.startswith(SKIP), before))
        i = end + 1
    return out


@dataclass
class Output:
    """An output block: its block, the command that prints it (None: marked skip) and why not."""

    block: Block
    command: str | None
    why_not: str = ""


def output_blocks(text: str) -> list[Output]:
    """Every block without a language that is a command's output, with that command; a block
    without a language and without a marker is an error."""
    out = []
    commands: list[str] = []
    for b in blocks(text):
        if b.lang in SHELL and not b.skip:
            commands += [c for _, c in shell_commands(b)]
            continue
        if b.lang not in ("", "text"):
            continue
        if b.marker.startswith(TEXT):
            continue
        m = OUTPUT.match(b.marker)
        assert m, (
            f"README.md:{b.line}: a block without a language needs `<!-- readme-output: COMMAND PREFIX -->` "
            f"(or `readme-output: skip (why)`, or `{TEXT} what it is -->`) before it"
        )
        what = m.group(1).strip()
        if what.startswith("skip"):
            assert re.match(r"skip \(.+\)$", what), f"README.md:{b.line}: `readme-output: skip (why)` needs its why"
            out.append(Output(b, None, what))
            continue
        found = [c for c in commands if c.startswith(what)]
        assert found, f"README.md:{b.line}: no command before this block begins with `{what}`"
        out.append(Output(b, found[0]))
    return out


def clone_like(where: Path) -> Path:
    """A directory laid out like a clone of the repository (its files linked, no results/) with
    ../shared beside it: what the README's commands expect, and nothing written into the repository."""
    repo = where / "repo"
    repo.mkdir()
    for entry in ROOT.iterdir():
        if entry.name != "results":
            (repo / entry.name).symlink_to(entry)
    (where / "shared").symlink_to(SHARED)
    return repo


def readme_env() -> dict:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "SSDLAB_PYTHON": sys.executable, "NO_COLOR": "1"}
    env.pop("SSDLAB_TRACES", None)
    return env


# `ssdlab …` as the README's reader runs it, with this interpreter.
DEFINE = 'ssdlab() { "$SSDLAB_PYTHON" -m ssdlab "$@"; }\n'


def run_shell(cmd: str, repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", DEFINE + cmd], cwd=repo, env=readme_env(), capture_output=True, text=True
    )


def printed(o: Output, repo: Path) -> list[str]:
    """The lines the output block's command prints now (stdout)."""
    p = run_shell(o.command, repo)
    assert p.returncode == 0, f"README.md:{o.block.line}: `{o.command.splitlines()[0]}` failed:\n{p.stderr[-2000:]}"
    return p.stdout.splitlines()


def quoted_lines_match(quoted: list[str], lines: list[str]) -> list[str]:
    """The quoted lines that are not lines of `lines` in the same order (empty: all are)."""
    missing, at = [], 0
    for q in quoted:
        try:
            at = lines.index(q, at) + 1
        except ValueError:
            missing.append(q)
    return missing


def updated(quoted: list[str], lines: list[str], where: str) -> list[str]:
    """Each quoted line replaced by the printed line of the same first word."""
    by_name = {line.split()[0]: line for line in lines if line.split()}
    out = []
    for q in quoted:
        name = q.split()[0] if q.split() else ""
        assert name in by_name, f"{where}: `{name}` is no longer printed; edit the block by hand"
        out.append(by_name[name])
    return out


def update_readme() -> int:
    """Rewrite every checked output block of README.md with what its command prints now."""
    import tempfile

    text = README.read_text()
    lines = text.splitlines(keepends=True)
    changed = 0
    with tempfile.TemporaryDirectory() as tmp:
        repo = clone_like(Path(tmp))
        for o in output_blocks(text):
            if o.command is None:
                print(f"README.md:{o.block.line}: not checked: {o.why_not}")
                continue
            quoted = o.block.text.splitlines()
            new = updated(quoted, printed(o, repo), f"README.md:{o.block.line}")
            if new != quoted:
                first = o.block.line - 1
                lines[first : first + len(quoted)] = [line + "\n" for line in new]
                changed += 1
    README.write_text("".join(lines))
    print(f"README.md: {changed} output block{'s' if changed != 1 else ''} updated")
    return 0


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
    repo = clone_like(tmp_path)
    env = readme_env()

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
                check(f"`{cmd.splitlines()[0]}`", line, run_shell(cmd, repo))

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


OUTPUT_SAMPLE = """```sh
ssdlab run --set a=1
ssdlab run --set b=2 \\
  --set c=3
```

<!-- readme-output: ssdlab run --set b=2 -->

```
x   1
```

<!-- readme-output: skip (hours) -->
```
y
```

<!-- readme-text: a diagram -->
```
a → b
```
"""


def test_output_blocks_are_found_with_their_commands():
    outs = output_blocks(OUTPUT_SAMPLE)
    assert [(o.block.line, o.command, o.why_not) for o in outs] == [
        (10, "ssdlab run --set b=2 \\\n  --set c=3", ""),
        (15, None, "skip (hours)"),
    ]
    with pytest.raises(AssertionError, match="needs `<!-- readme-output"):
        output_blocks("```\nx\n```\n")
    with pytest.raises(AssertionError, match="no command before this block begins with `ssdlab nope`"):
        output_blocks("<!-- readme-output: ssdlab nope -->\n```\nx\n```\n")
    # Quoted lines: some of the printed ones, in order; an update takes each by its first word.
    lines = ["metric  value", "a   1 µs", "b   2", "c   3"]
    assert quoted_lines_match(["a   1 µs", "c   3"], lines) == []
    assert quoted_lines_match(["c   3", "a   1 µs"], lines) == ["a   1 µs"]
    assert updated(["a   9 µs", "c   0"], lines, "here") == ["a   1 µs", "c   3"]


def test_readme_output_blocks_are_what_their_commands_print(tmp_path):
    """Every output block of the README against its command's output now (cheap commands only:
    an expensive one is marked skip, with its reason). After a change of results:
    `PYTHONPATH=python .venv/bin/python tests/test_readme.py --update` (`make readme`)."""
    outs = output_blocks(the_readme())
    checked = [o for o in outs if o.command is not None]
    assert checked, "the README has no checked output block"
    repo = clone_like(tmp_path)
    for o in checked:
        missing = quoted_lines_match(o.block.text.splitlines(), printed(o, repo))
        assert not missing, (
            f"README.md:{o.block.line}: lines `{o.command.splitlines()[0]}` no longer prints: {missing}; "
            "regenerate with `make readme` (tests/test_readme.py --update)"
        )


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: tests/test_readme.py --update   (rewrites README.md's output blocks)")
    sys.exit(update_readme())
