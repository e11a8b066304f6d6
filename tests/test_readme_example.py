"""`.ci/readme_example.py`, which runs the README's first Python example against the wheel in CI."""

import importlib.util
import re
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load():
    spec = importlib.util.spec_from_file_location("readme_example", ROOT / ".ci" / "readme_example.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DOC = """# Title

```sh
cat > a.toml <<'TOML'
x = 1
TOML
cat > b.txt <<'END'
two
lines
END
```

```python
from pathlib import Path
assert Path("a.toml").read_text() == "x = 1\\n"
assert Path("b.txt").read_text() == "two\\nlines\\n"
raise RuntimeError("boom")
```

```python
raise AssertionError("only the first block runs")
```
"""


def test_writes_the_tour_files_and_runs_the_first_block(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(DOC)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match="boom") as e:
        load().main(str(readme))
    # The traceback names the README's own line.
    last = traceback.extract_tb(e.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == (str(readme), DOC.splitlines().index('raise RuntimeError("boom")') + 1)


def test_the_readme_has_an_example_and_its_files():
    mod = load()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    line, code = mod.first_python_block(text)
    assert "import ssdlab" in code
    compile(code, "README.md", "exec")
    # Every configuration file the example reads is one the tour writes.
    for name in re.findall(r'from_toml\("([^"]+)"\)', code):
        assert name in mod.tour_files(text)
