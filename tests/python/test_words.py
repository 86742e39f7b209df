"""Words a reader knows (issue 18 item 7): papers are named by title and short key, never by
"seed 000"; the protocol reference cited is the repository's docs/PROTOCOLS.md."""

from __future__ import annotations

import re

from conftest import REPO


def _texts():
    files = [REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "DEVELOPERS.md"]
    files += sorted((REPO / "docs").glob("*.md"))
    files += sorted((REPO / "crates").rglob("*.rs"))
    files += sorted((REPO / "python" / "racc").rglob("*.py")) + sorted((REPO / "python" / "racc").rglob("*.toml"))
    return [(f, f.read_text(encoding="utf-8")) for f in files]


def test_no_seed_numbers_and_the_reference_is_in_the_repository():
    assert (REPO / "docs" / "PROTOCOLS.md").is_file()
    for f, text in _texts():
        assert not re.search(r"\b[Ss]eeds? 00\d", text), f
        for m in re.finditer(r"[\w./]*PROTOCOLS\.md", text):
            assert m.group(0).endswith("docs/PROTOCOLS.md"), (f, m.group(0))


def test_every_experiment_names_its_paper():
    from racc import experiments
    from racc.experiments.papers import PAPERS, title

    ref = (REPO / "docs" / "PROTOCOLS.md").read_text(encoding="utf-8")
    for name in experiments.names():
        src = experiments.get(name).source
        assert title(src), (name, src)
    for key in PAPERS:
        assert f"| {key} |" in ref
