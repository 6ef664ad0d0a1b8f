"""The documentation as a front door and a site (issue 35, item 8): README.md is at most ~150
lines and links into docs/ by kind; every relative Markdown link of README.md, CONTRIBUTING.md,
the folders' READMEs and docs/ resolves, anchors included (scripts/check-links.py); `make docs`'s
mkdocs build passes with --strict (no page outside the nav, no broken link in the site)."""
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK = str(REPO / "scripts" / "check-links.py")


def check_links(root):
    return subprocess.run([sys.executable, CHECK, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


def test_every_link_of_the_docs_resolves():
    r = check_links(REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith(" 0 broken"), r.stdout
    links = int(r.stdout.split(" files, ")[1].split(" links")[0])
    assert links >= 60, r.stdout  # the README's map and tables, the docs' index: not vacuous


def copy_docs(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("README.md", "CONTRIBUTING.md", "mkdocs.yml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "docs", root / "docs")
    shutil.copytree(REPO / "scenarios", root / "scenarios",
                    ignore=shutil.ignore_patterns("traces"))
    for folder in ("calibration", "python"):
        (root / folder).mkdir()
        shutil.copy(REPO / folder / "README.md", root / folder / "README.md")
    return root


def test_a_broken_file_link_and_a_broken_anchor_are_reported(tmp_path):
    root = copy_docs(tmp_path)
    assert check_links(root).returncode == 0
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace("(docs/tutorial.md#from-python)", "(docs/tutorial.md#from-rust)")
                      .replace("(docs/limits.md)", "(docs/limit.md)"), encoding="utf-8")
    r = check_links(root)
    assert r.returncode == 1
    assert "docs/tutorial.md#from-rust: no heading with the anchor #from-rust" in r.stdout, r.stdout
    assert "docs/limit.md: no such file" in r.stdout, r.stdout
    assert r.stdout.strip().endswith(" 2 broken"), r.stdout


def test_a_page_missing_from_the_nav_is_reported(tmp_path):
    root = copy_docs(tmp_path)
    (root / "docs" / "howto" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    r = check_links(root)
    assert r.returncode == 1 and "docs/howto/orphan.md is not in the nav" in r.stdout, r.stdout


def test_links_in_code_are_not_links(tmp_path):
    root = copy_docs(tmp_path)
    with open(root / "docs" / "index.md", "a", encoding="utf-8") as f:
        f.write("\n`[not a link](nowhere.md)`\n\n```\n[nor this](nowhere.md)\n```\n")
    assert check_links(root).returncode == 0


def test_readme_is_a_front_door():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "make run" in text and "make test" in text
    # the venv line names the interpreter it needs (a pyenv python3 first on PATH stops on wheel)
    assert "/usr/bin/python3 -m venv" in text and "\npython3 -m venv" not in text
    for page in ("docs/tutorial.md", "docs/howto/plan-a-node.md",
                 "docs/howto/diagnose-a-pending-pod.md", "docs/howto/replay-a-trace.md",
                 "docs/howto/compare-strategies.md", "docs/reference/cli.md",
                 "docs/validation.md", "docs/performance.md", "docs/install.md",
                 "docs/limits.md"):
        assert f"]({page}" in text, page
    # the workload -> strategy table: every row links to a shipped scenario that exists
    table = text.split("## Which strategy for which workload")[1].split("\n## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "](scenarios/" in line]
    assert len(rows) >= 8
    for row in rows:
        target = row.split("](")[1].split(")")[0]
        assert (REPO / target).is_file() and target.endswith(".yaml"), row


def test_mkdocs_builds_the_site_strictly(tmp_path):
    site = tmp_path / "site"
    r = subprocess.run(["/usr/bin/python3", "-m", "mkdocs", "build", "--strict", "--site-dir",
                        str(site)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for page in ("index.html", "tutorial.html", "howto/plan-a-node.html", "reference/cli.html",
                 "performance.html", "validation.html"):
        assert (site / page).is_file(), page
    # the moved plan table is on its how-to page
    assert "gpumux plan scenarios/plan/plan-h100-node.yaml --jobs 2 -o best.yaml" in \
        (site / "howto" / "plan-a-node.html").read_text(encoding="utf-8")
