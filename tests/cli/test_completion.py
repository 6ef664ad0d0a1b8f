"""`gpumux completion bash|zsh|fish`: generated from the command table, so every command that
`gpumux help` lists and every option its --help shows completes; the bash script runs."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]


def listed_commands():
    """The commands `gpumux help` lists (two spaces, then a lower-case word)."""
    names = re.findall(r"^  ([a-z]+)\b", gpumux("help").stdout, re.MULTILINE)
    assert {"run", "compare", "models", "mig", "strategies", "completion", "help"} <= set(names)
    return names


def long_options(command):
    """The --options `gpumux COMMAND --help` shows."""
    return set(re.findall(r"--([a-z][a-z0-9-]*)", gpumux(command, "--help").stdout))


def bash_complete(script, *words):
    """COMPREPLY after typing WORDS (the last one being completed) with SCRIPT loaded."""
    line = " ".join(["gpumux", *words])
    program = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}; _gpumux\n"
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    proc = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_command_and_option_is_in_the_script(shell):
    proc = gpumux("completion", shell)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    for command in listed_commands():
        assert re.search(rf"\b{command}\b", proc.stdout), (shell, command)
        if command == "help":
            continue
        for option in long_options(command) - {"help"}:
            assert re.search(rf"(--|-l ){re.escape(option)}\b", proc.stdout), (shell, command,
                                                                             option)


def test_bash_script_completes_commands_options_and_files(tmp_path):
    script = gpumux("completion", "bash").stdout
    assert bash_complete(script, "compa") == ["compare"]
    assert set(bash_complete(script, "")) >= set(listed_commands())
    assert bash_complete(script, "run", "--se") == ["--seed", "--set"]
    assert "--strategies" in bash_complete(script, "compare", "--")
    assert bash_complete(script, "help", "pl") == ["plan", "plot"]
    (tmp_path / "only-one.yaml").write_text("")
    assert bash_complete(script, "run", str(tmp_path / "only")) == [str(tmp_path / "only-one.yaml")]


@pytest.mark.parametrize("shell", [s for s in ("zsh", "fish") if shutil.which(s)] or ["bash"])
def test_script_parses_in_its_shell(shell):
    script = gpumux("completion", shell).stdout
    proc = subprocess.run([shell, "-n"], input=script, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("args", [[], ["tcsh"], ["bash", "zsh"]])
def test_bad_shell_is_one_line_exit_2(args):
    proc = gpumux("completion", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "bash, zsh" in proc.stderr, proc.stderr


def test_bash_script_completes_option_values_from_the_cli_tables(tmp_path):
    """Values complete from the tables the CLI validates with (issue 35 item 7): plan
    platforms and strategies, --format words, GPU models; lists complete after the last comma;
    `--option=value` completes too."""
    script = gpumux("completion", "bash").stdout
    assert bash_complete(script, "plan", "x.yaml", "--platform", "") == [
        "bare", "gke", "device-plugin", "mig-parted"]
    assert bash_complete(script, "plan", "x.yaml", "--platform", "g") == ["gke"]
    assert bash_complete(script, "plan", "x.yaml", "--platform", "=") == [
        "bare", "gke", "device-plugin", "mig-parted"]
    assert bash_complete(script, "plan", "x.yaml", "--platform", "=", "mig") == ["mig-parted"]
    assert bash_complete(script, "plan", "x.yaml", "--strategies", "mig,time") == [
        "mig,time-slicing"]
    assert "mig+mps" in bash_complete(script, "plan", "x.yaml", "--strategies", "")
    # compare's strategies are the registry's, not plan's families.
    compare = bash_complete(script, "compare", "x.yaml", "--strategies", "")
    assert "exclusive" in compare and "as-is" in compare
    assert bash_complete(script, "plan", "x.yaml", "--format", "") == ["table", "json", "yaml"]
    assert bash_complete(script, "run", "x.yaml", "--format", "c") == ["csv"]
    assert bash_complete(script, "plan", "x.yaml", "--gpus", "h100-sxm") == ["h100-sxm-80gb="]
    # A free value (a number) completes nothing from a table: file names as before.
    (tmp_path / "seedfile").write_text("")
    assert bash_complete(script, "run", "x.yaml", "--seed", str(tmp_path / "seedf")) == [
        str(tmp_path / "seedfile")]


def test_every_completed_value_is_accepted_and_the_lists_agree_across_shells(tmp_path):
    """Each word the script offers for --platform and --format passes the CLI's own check, and
    zsh and fish offer the same words as bash."""
    script = gpumux("completion", "bash").stdout
    scenario = tmp_path / "p.yaml"
    scenario.write_text("name: p\nduration: 1s\nplan:\n  gpus: [{model: h100-sxm-80gb, "
                        "cost_per_hour: 4.0}]\ntenants:\n  - name: a\n    workload:\n"
                        "      arrivals: {process: poisson, rate: 10/s}\n      request:\n"
                        "        kernels: [{name: k, duration: 1ms}]\n")
    platforms = bash_complete(script, "plan", "x.yaml", "--platform", "")
    for platform in platforms:
        proc = gpumux("validate", str(scenario), "--set", f"plan.platform={platform}")
        assert proc.returncode == 0, (platform, proc.stderr)
    for word in bash_complete(script, "strategies", "--format", ""):
        proc = gpumux("strategies", "--format", word)
        assert proc.returncode == 0, (word, proc.stderr)
    zsh, fish = gpumux("completion", "zsh").stdout, gpumux("completion", "fish").stdout
    assert f"--platform) vals=({' '.join(platforms)})" in zsh
    assert f"-l platform -x -a '{' '.join(platforms)}'" in fish
