"""Build conventions: `make run` builds only what its commands run (the gpumux binary and the
Python module its report --html and plot draw with); CI fails on compiler warnings."""
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "check-warnings.sh"


def test_make_run_builds_the_binary_and_the_python_module_only(tmp_path):
    proc = subprocess.run(["make", "-n", "run", f"BUILD={tmp_path}/b"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    builds = [line for line in proc.stdout.splitlines() if line.startswith("cmake --build")]
    assert builds == [f"cmake --build {tmp_path}/b -j2 --target gpumux _gpumux"], proc.stdout
    assert any(line.startswith(f"{tmp_path}/b/gpumux run ") for line in proc.stdout.splitlines())


def test_check_warnings_fails_on_a_compiler_warning(tmp_path):
    clean = tmp_path / "clean.log"
    clean.write_text("[1/2] Building CXX object x.o\n"
                     "lto-wrapper: warning: using serial compilation of 6 LTRANS jobs\n"
                     "lto-wrapper: note: see the '-flto' option documentation\n")
    assert subprocess.run([str(CHECK), str(clean)], capture_output=True).returncode == 0
    dirty = tmp_path / "dirty.log"
    dirty.write_text(clean.read_text() +
                     "/src/models/a.cpp:3:5: warning: unused variable 'x' [-Wunused-variable]\n")
    proc = subprocess.run([str(CHECK), str(dirty)], capture_output=True, text=True)
    assert proc.returncode == 1 and "a.cpp:3:5" in proc.stderr and "lto-wrapper" not in proc.stderr


def test_ci_runs_the_warning_check_then_make_test():
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    steps = [l for l in ci if l.startswith(("make ", "scripts/check-warnings.sh"))]
    assert steps[0].startswith("make build") and "tee" in steps[0]
    assert steps[1].startswith("scripts/check-warnings.sh") and steps[2] == "make test"


def test_ci_runs_the_sanitizers_and_the_fuzzer_after_make_test():
    """.ci/run ends with scripts/ci-sanitize.sh (ASan + UBSan tests, corpus replay, a timed
    libFuzzer run); a sanitizer report or a fuzz finding must fail it, not scroll by."""
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert ci.index("scripts/ci-sanitize.sh") > ci.index("make test")
    script = (REPO / "scripts" / "ci-sanitize.sh").read_text()
    assert "set -euo pipefail" in script
    assert "halt_on_error=1" in script and "abort_on_error=1" in script
    assert "-DGPUMUX_FUZZ=ON" in script and "-max_total_time=" in script
    assert "tests/fuzz/corpus" in script and "exit 1" in script
    deps = (REPO / "scripts" / "install-deps.sh").read_text()
    assert "clang libclang-rt-14-dev" in deps


def test_ci_checks_the_format_and_the_check_finds_drift(tmp_path):
    """.ci/run runs scripts/check-format.sh; clang-format with the repository's .clang-format
    flags a file that drifts from the house format (so the check can fail)."""
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert "scripts/check-format.sh" in ci
    import shutil
    clang_format = shutil.which("clang-format")
    assert clang_format, "clang-format is installed by make deps"
    shutil.copy(REPO / ".clang-format", tmp_path / ".clang-format")
    good = tmp_path / "good.cpp"
    good.write_text("int add(int a, int b) { return a + b; }\n")
    bad = tmp_path / "bad.cpp"
    bad.write_text("int add(int a,int b){return a+b;}\n")
    for path, drift in ((good, False), (bad, True)):
        proc = subprocess.run([clang_format, "--dry-run", str(path)], capture_output=True,
                              text=True, cwd=tmp_path)
        assert ("code should be clang-formatted" in proc.stderr) == drift, proc.stderr
