"""What the notebook tests share: reading a notebook's prose and checking its sections."""

from __future__ import annotations


def markdown_of(notebook: dict) -> str:
    """All markdown cells' text, joined."""
    return "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")


def assert_sections_in_order(notebook: dict, sections: list[str]) -> None:
    """Every ``### title`` heading is there, in the order given."""
    markdown = markdown_of(notebook)
    positions = [markdown.find(f"### {title}") for title in sections]
    assert -1 not in positions, [t for t, p in zip(sections, positions, strict=True) if p == -1]
    assert positions == sorted(positions)
