"""Docs name files by repository-relative paths only (issue 14: a doc named a
machine's absolute path for the papers)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ABSOLUTE = re.compile(r"(?<![\w.~-])/(?:work|home|root|Users|mnt)/\S*")


def test_docs_use_repository_relative_paths():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(docs) > 10
    found = {str(p.relative_to(ROOT)): ABSOLUTE.findall(p.read_text()) for p in docs}
    assert not {k: v for k, v in found.items() if v}
    assert ABSOLUTE.search("the papers in /work/papers/x.pdf")  # the pattern finds one
