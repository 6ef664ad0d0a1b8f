#!/usr/bin/env python3
"""Checks every relative Markdown link of the documentation: README.md, CONTRIBUTING.md, the
README.md of each top-level folder, and every .md file under docs/. A link `[text](TARGET)`
(outside code spans and fenced blocks) whose TARGET is not a URL must name an existing file or
folder, relative to the file it is in; a `#anchor` (alone, or after a .md file) must be the slug
of a heading of that file, as GitHub and mkdocs both make it (lower case, punctuation dropped,
spaces to hyphens). mkdocs.yml's nav must list every page under docs/, and only existing ones.

Usage: scripts/check-links.py [--root DIR]     exit 0 when every link resolves, 1 otherwise
(one line per broken link: FILE:LINE: TARGET: why). tests/cli/test_docs_links.py runs it.
"""
from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents(root: Path) -> list[Path]:
    found = [root / "README.md", root / "CONTRIBUTING.md"]
    found += sorted(p for p in root.glob("*/README.md"))
    found += sorted((root / "docs").rglob("*.md"))
    return [p for p in found if p.is_file()]


def _strip_code(line: str) -> str:
    """The line with its inline code spans blanked (same length, so columns stay)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks, code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, _strip_code(line)


def _plain_heading(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text
    return text.replace("`", "").replace("*", "")


def slug_github(heading: str) -> str:
    text = _plain_heading(heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def slug_mkdocs(heading: str) -> str:
    """Python-Markdown's toc.slugify (mkdocs' default)."""
    text = unicodedata.normalize("NFKD", _plain_heading(heading))
    text = text.encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> tuple[set, set]:
    """(GitHub anchors, mkdocs anchors) of a Markdown file's headings; repeated headings get
    -1, -2, ... as both make them."""
    github, mkdocs = set(), set()
    seen_g: dict = {}
    seen_m: dict = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        for slug, seen, out in ((slug_github(m[2]), seen_g, github),
                                (slug_mkdocs(m[2]), seen_m, mkdocs)):
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            out.add(slug if count == 0 else f"{slug}-{count}")
    return github, mkdocs


def check_file(path: Path, root: Path) -> list[str]:
    problems = []
    shown = path.relative_to(root)
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(line):
            target = m.group(1)
            if URL.match(target) or target.startswith("//"):
                continue
            file_part, _, anchor = target.partition("#")
            where = f"{shown}:{number}: {target}"
            dest = path if not file_part else (path.parent / file_part)
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
            try:
                dest.resolve().relative_to(root.resolve())
            except ValueError:
                problems.append(f"{where}: outside the repository")
                continue
            if anchor:
                if dest.is_dir() or dest.suffix != ".md":
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
                    continue
                github, mkdocs = anchors(dest)
                if anchor not in github or anchor not in mkdocs:
                    problems.append(f"{where}: no heading with the anchor #{anchor}")
    return problems


def nav_pages(mkdocs_yml: Path) -> list[str]:
    """The .md paths listed in mkdocs.yml's nav (read without a YAML library)."""
    pages, in_nav = [], False
    for line in mkdocs_yml.read_text(encoding="utf-8").splitlines():
        if re.match(r"^nav:\s*$", line):
            in_nav = True
            continue
        if in_nav and line and not line.startswith((" ", "-", "#")):
            break
        if in_nav:
            m = re.search(r"([\w./-]+\.md)\s*$", line)
            if m:
                pages.append(m.group(1))
    return pages


def check_nav(root: Path) -> list[str]:
    mkdocs_yml = root / "mkdocs.yml"
    if not mkdocs_yml.is_file():
        return ["mkdocs.yml: missing"]
    listed = nav_pages(mkdocs_yml)
    docs = root / "docs"
    problems = [f"mkdocs.yml: nav lists {p}, which is not under docs/" for p in listed
                if not (docs / p).is_file()]
    pages = sorted(str(p.relative_to(docs)) for p in docs.rglob("*.md"))
    problems += [f"mkdocs.yml: docs/{p} is not in the nav" for p in pages if p not in listed]
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the repository to check (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    files = documents(root)
    problems = []
    links = 0
    for path in files:
        links += sum(1 for _, line in prose_lines(path.read_text(encoding="utf-8"))
                     for _ in LINK.finditer(line))
        problems += check_file(path, root)
    problems += check_nav(root)
    for problem in problems:
        print(problem)
    print(f"check-links: {len(files)} files, {links} links, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
