"""The bugs the reliability round found (test_fuzz_scenarios.py, and attacks on calibrate, plan
and the developer switches), each refused in one line naming the file or flag and the key.

Repro before the fix, one line each:
- `run time-slicing-h100.yaml --set gpus.0.sharing.timeslice=1ns`: minutes of simulation;
- `--set gpus.0.sharing.context_switch=100000h`: exit 3, "event scheduled in the past";
- `calibrate solo-latency.csv --date 2026-02-30`: accepted, written into the profile;
- `calibrate solo-latency.csv --report /missing/r.md`: "-o /missing/r.md: ...";
- `calibrate header-only.csv`: "calibrate: the data files hold no point" (no file named);
- `GPUMUX_PLAN_FUTILITY=off gpumux plan ...`: the rule stayed on without a word;
- `plan plan-identical-tenants.yaml --prices /missing.yaml` (bare): accepted, never read;
  on gke the error read "--set plan.prices: ...";
- `run cluster/fleet-16.yaml --set cluster.pods.0.workload.workload.request.kernels.0.duration=
  100000h`: exit 0 after 197 s (the workload pods' budget had no samples term);
- (test_fuzz_new_surfaces.py, 2026-12-07) `plan ... --jobs 100000`: ~15,000 forked processes,
  658 s to stop; `calibrate` of a value of 1e300 ms: an error naming its temporary profile; of
  one source: out-of-sample numbers from a fold of no point; `-o DATA.csv`: the data replaced;
  a byte 0xFF in a note: a profile gpumux refuses; a point's unknown profile: no file named;
  `plan S.yaml -o S.yaml`: the scenario replaced; `inspect OUT.h5`: "not UTF-8 text".
Drives $GPUMUX_BIN.
"""
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
TIME_SLICING = REPO / "scenarios" / "time-slicing-h100.yaml"
SOLO = REPO / "calibration" / "fit" / "solo-latency.csv"
PLAN = REPO / "scenarios" / "plan" / "plan-identical-tenants.yaml"

SCENARIO = """\
name: ts
duration: 200ms
gpus: [{{name: gpu0, model: {model}, sharing: {{mode: time-slicing, {sharing}}}}}]
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {{process: poisson, rate: 100/s}}
      request: {{kernels: [{{name: k, duration: 1ms}}]}}
  - name: b
    device: gpu0
    workload:
      arrivals: {{process: poisson, rate: 100/s}}
      request: {{kernels: [{{name: k, duration: 1ms}}]}}
"""


def one_error(out):
    assert out.returncode == 2, out.stderr + out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("gpumux: error: ") and "internal error" not in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("sharing,text", [
    ("timeslice: 1e-9s", "gpus.0.sharing.timeslice: at least 1us (the driver sets a time slice "
                         "in whole microseconds), got 1ns"),
    ("timeslice: 999ns", "got 999ns"),
    ("context_switch: 100000h", "gpus.0.sharing.context_switch: at most 1s"),
    ("preemption_latency: 1001ms", "gpus.0.sharing.preemption_latency: at most 1s"),
    ("cache_refill: 1e6s", "gpus.0.sharing.cache_refill: at most 1s"),
])
def test_time_slicing_durations_out_of_range_are_refused(tmp_path, command, sharing, text):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(model="h100-sxm-80gb", sharing=sharing))
    line = one_error(run_gpumux(command, path, "-q", timeout=60, cwd=tmp_path))
    assert "s.yaml:3:" in line and text in line, line


def test_the_range_ends_are_accepted(tmp_path):
    """1us and 1s are in range: the run ends and its numbers are finite."""
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(
        model="h100-sxm-80gb",
        sharing="timeslice: 1us, context_switch: 1s, preemption_latency: 0us, cache_refill: 0us"))
    assert run_gpumux("validate", path, "-q", cwd=tmp_path).returncode == 0
    out = run_gpumux("run", path, "-q", "--format", "json", "--set", "duration=20ms",
                     "--set", "tenants.0.workload.arrivals.rate=50/s",
                     "--set", "tenants.1.workload.arrivals.rate=50/s", timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr


def test_a_set_override_is_checked_the_same(tmp_path):
    line = one_error(run_gpumux("run", TIME_SLICING, "-q", "--set",
                                "gpus.0.sharing.timeslice=1ns", timeout=60))
    assert line.startswith("gpumux: error: --set gpus.0.sharing.timeslice: at least 1us"), line


@pytest.mark.parametrize("key,value,text", [
    ("timeslice", "500ns", "at least 1us"),
    ("context_switch", "2s", "at most 1s"),
    ("preemption_latency", "100000h", "at most 1s"),
])
def test_a_device_profile_out_of_range_is_refused(tmp_path, key, value, text):
    profile = (REPO / "tests" / "data" / "profiles" / "minimal-mig.yaml").read_text()
    lines = profile.splitlines()
    found = [i for i, line in enumerate(lines) if line.startswith(key + ":")]
    if found:
        lines[found[0]] = f'{key}: {{value: {value}, assumption: "test"}}'
    else:
        lines.append(f'{key}: {{value: {value}, assumption: "test"}}')
    (tmp_path / "p.yaml").write_text("\n".join(lines) + "\n")
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(model="p.yaml", sharing="replicas: 2"))
    line = one_error(run_gpumux("validate", path, "-q", cwd=tmp_path))
    assert "p.yaml" in line and key in line and text in line, line


@pytest.mark.parametrize("date", ["2026-02-30", "2026-13-01", "2026-00-10", "0000-00-00",
                                  "2026-1-011", "----------"])
def test_calibrate_date_must_be_a_calendar_day(date):
    line = one_error(run_gpumux("calibrate", SOLO, "--date", date))
    assert line == f"gpumux: error: --date: expected a day as YYYY-MM-DD, got '{date}'", line


def test_calibrate_report_errors_name_report(tmp_path):
    line = one_error(run_gpumux("calibrate", SOLO, "--report", tmp_path / "missing" / "r.md"))
    assert line.startswith(f"gpumux: error: --report {tmp_path}/missing/r.md: "), line
    line = one_error(run_gpumux("calibrate", SOLO, "-o", tmp_path / "missing" / "p.yaml",
                                "--profile", "a30-24gb"))
    assert line.startswith(f"gpumux: error: -o {tmp_path}/missing/p.yaml: "), line


def test_calibrate_header_only_names_the_file(tmp_path):
    data = tmp_path / "header-only.csv"
    data.write_text(SOLO.read_text().splitlines()[0] + "\n# a comment\n\n")
    line = one_error(run_gpumux("calibrate", data))
    assert line == (f"gpumux: error: {data}: no measured point (only a header, blank or comment "
                    "lines): nothing to fit"), line


@pytest.mark.parametrize("variable", ["GPUMUX_PLAN_FUTILITY", "GPUMUX_PLAN_LAZY", "GPUMUX_DIRECT",
                                      "GPUMUX_DEVICE_EAGER"])
@pytest.mark.parametrize("value", ["off", "false", " 0", "2"])
def test_a_developer_switch_is_0_or_1(variable, value):
    line = one_error(run_gpumux("validate", TIME_SLICING, "-q", extra_env={variable: value}))
    assert line == (f"gpumux: error: {variable}: expected 0 (off) or 1 (on), got '{value}'"), line


@pytest.mark.parametrize("value", ["0", "1", ""])
def test_a_developer_switch_takes_0_1_or_empty(value):
    out = run_gpumux("validate", TIME_SLICING, "-q", extra_env={"GPUMUX_PLAN_FUTILITY": value})
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("platform", ["bare", "gke"])
def test_plan_prices_missing_is_refused_naming_the_flag(tmp_path, platform):
    line = one_error(run_gpumux("plan", PLAN, "-q", "--platform", platform, "--prices",
                                tmp_path / "missing.yaml", timeout=120))
    assert line.startswith(f"gpumux: error: --prices: plan.prices {tmp_path}/missing.yaml: "
                           "cannot open price table"), line


def test_plan_prices_malformed_is_refused_on_bare(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("machines: [\n")
    line = one_error(run_gpumux("plan", PLAN, "-q", "--prices", prices, timeout=120))
    assert f"{prices}:2:" in line and "YAML syntax error" in line, line
    prices.write_text("")
    line = one_error(run_gpumux("plan", PLAN, "-q", "--prices", prices, timeout=120))
    assert f"{prices}" in line and "provider" in line, line


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_workload_pod_draining_for_years_is_refused(command):
    """A pod's kernel of 100000h (for 100000us) drained for 4e8 s sampled once per 3 s horizon:
    every series recorded ~1e8 rows and the run took minutes (197 s); now the work budget's
    samples term refuses it, as it does a scenario's tenant."""
    line = one_error(run_gpumux(
        command, REPO / "scenarios" / "cluster" / "fleet-16.yaml", "-q", "--set",
        "cluster.pods.0.workload.workload.request.kernels.0.duration=100000h", timeout=60))
    assert "fleet-16.yaml:" in line and "cluster.pods.0.workload:" in line, line
    assert "the workload pods would record about" in line and "timeseries samples" in line, line
    assert "set allow_large: true" in line, line


# Found by test_fuzz_new_surfaces.py and its exploratory runs (2026-12-07). Points of two
# sources on one GPU, a fit in well under a second.
POINTS_HEADER = ("id,source,model,phase,batch,seq_len,dtype,runtime,profile,mig,metric,value,unit,"
                 "note")


def points(tmp_path, rows, name="points.csv"):
    path = tmp_path / name
    path.write_text(POINTS_HEADER + "\n" + "".join(row + "\n" for row in rows))
    return path


def point(name, source, batch=1, value="1", unit="ms", metric="latency", profile="a100-80gb",
          runtime="tensorrt"):
    return (f"{name},{source},resnet50,inference,{batch},,fp16,{runtime},{profile},,{metric},"
            f"{value},{unit},")


def test_plan_jobs_beyond_1024_is_refused_before_forking():
    """`plan --jobs 100000` forked a simulation process per job (~15,000 before the machine ran
    out) and took 658 s to stop under `timeout 60`."""
    for jobs in ("1025", "100000"):
        line = one_error(run_gpumux("plan", PLAN, "-q", "--jobs", jobs, timeout=30))
        assert line == f"gpumux: error: --jobs: {jobs} is not in 1..1024", line


@pytest.mark.parametrize("value,unit,metric,seconds", [
    ("1e300", "ms", "latency", "1e+297"), ("1e-300", "ms", "latency", "1e-303"),
    ("0.5", "us", "latency", "5e-07"), ("1001", "s", "latency", "1001"),
    ("1e300", "img/s", "throughput", "1e-300")])
def test_calibrate_refuses_a_request_time_outside_1us_to_1000s(tmp_path, value, unit, metric,
                                                               seconds):
    """1e300 ms overflowed the fitted nanoseconds into a negative profile value (the error named
    calibrate's temporary profile); 1e-300 ms was fitted and printed errors of +4.8e301 %."""
    data = points(tmp_path, [point("a", "s1", value=value, unit=unit, metric=metric),
                             point("b", "s2", batch=2, value="1.5")])
    line = one_error(run_gpumux("calibrate", data, "-q"))
    assert line == (f"gpumux: error: {data}:2: value: '{value} {unit}' is a request time of "
                    f"{seconds} s, outside 1 us - 1000 s (a wrong value or unit?)"), line


def test_calibrate_refuses_to_write_over_its_data_or_the_profile_with_the_report(tmp_path):
    """`-o DATA.csv` replaced the measured points with the profile; `-o X --report X` the
    profile with the report."""
    data = points(tmp_path, [point("a", "s1"), point("b", "s2", batch=2, value="1.5")])
    before = data.read_text()
    line = one_error(run_gpumux("calibrate", data, "-q", "-o", data, cwd=tmp_path))
    assert line == (f"gpumux: error: -o {data}: is one of the data files; writing it would "
                    "replace the measured points (name another file)"), line
    line = one_error(run_gpumux("calibrate", "points.csv", "-q", "--report", "./points.csv",
                                cwd=tmp_path))
    assert line.startswith("gpumux: error: --report ./points.csv: is one of the data files"), line
    line = one_error(run_gpumux("calibrate", data, "-q", "-o", "p.yaml", "--report", "./p.yaml",
                                cwd=tmp_path))
    assert line == ("gpumux: error: --report ./p.yaml: the same file as -o; the report would "
                    "replace the profile (name another file)"), line
    assert data.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.csv"]


def test_calibrate_with_one_source_says_out_of_sample_is_not_available(tmp_path):
    """With every point of one source, the only fold left out every point and fitted nothing:
    its all-zero parameters were printed as the out-of-sample error (-80.7 % on a ResNet-50
    point). Now: a warning, n/a in the report and the profile, null in JSON."""
    data = points(tmp_path, [point("a", "s1"), point("b", "s1", batch=2, value="1.5")])
    out = run_gpumux("calibrate", data, "-q", "--iterations", "1", "-o", tmp_path / "p.yaml",
                     "--report", tmp_path / "r.md", check=0)
    assert out.stderr.strip() == (f"gpumux: warning: {data}: every point is of source 's1': "
                                  "leave-one-source-out cross-validation needs two sources (out "
                                  "of sample: n/a)"), out.stderr
    report = (tmp_path / "r.md").read_text()
    # Two mechanisms (alone, all) and two points.
    assert "| all | 2 | " in report and report.count("| n/a |") == 4, report
    assert "leave-one-source-out n/a (one source)" in (tmp_path / "p.yaml").read_text()
    import json
    result = json.loads(run_gpumux("calibrate", data, "-q", "--iterations", "1", "--json",
                                   check=0).stdout)
    assert result["errors"]["all"]["out_of_sample"] is None
    assert all(p["out_of_sample_s"] is None for p in result["points"])
    assert result["errors"]["all"]["in_sample"] >= 0


def test_calibrate_names_the_file_line_and_column_of_a_bad_profile_or_runtime(tmp_path):
    """A point's unknown profile was "unknown GPU model 'ms'" with no file; an unknown runtime
    named calibrate's own scenario text by line and column after the file and line twice."""
    data = points(tmp_path, [point("a", "s1", profile="ms"), point("b", "s2", batch=2)])
    line = one_error(run_gpumux("calibrate", data, "-q"))
    assert line.startswith(f"gpumux: error: {data}:2: profile: unknown GPU model 'ms'"), line
    data = points(tmp_path, [point("a", "s1", runtime="bogusrt"), point("b", "s2", batch=2)])
    line = one_error(run_gpumux("calibrate", data, "-q"))
    assert line.startswith(f"gpumux: error: {data}:2: a: gpumux refuses this point: "
                           "tenants.0.workload.runtime: unknown runtime 'bogusrt'"), line
    line = one_error(run_gpumux("calibrate", SOLO, "-q", "--profile", "bogus", "-o",
                                tmp_path / "p.yaml"))
    assert line.startswith("gpumux: error: --profile: unknown GPU model 'bogus'"), line


def test_calibrate_refuses_text_that_is_not_utf8(tmp_path):
    """A note with a byte 0xFF was copied into the written profile's provenance, which gpumux
    then refused to read as not UTF-8."""
    data = points(tmp_path, [point("a", "s1"), point("b", "s2", batch=2)])
    data.write_bytes(data.read_bytes().replace(b",s2,", b",s\xff2,"))
    line = one_error(run_gpumux("calibrate", data, "-q", errors="replace"))
    assert line.startswith(f"gpumux: error: {data}:3: line: not UTF-8 text (byte 0xFF"), line


@pytest.mark.parametrize("command", ["inspect", "validate", "run"])
def test_a_result_file_given_as_a_scenario_says_it_is_one(tmp_path, command):
    """An HDF5 result given where a scenario is read was "not UTF-8 text (byte 0x89; a Latin-1
    or Windows-1252 file?)"."""
    result = tmp_path / "out.h5"
    run_gpumux("run", REPO / "scenarios" / "quickstart.yaml", "-q", "-o", result, check=0)
    line = one_error(run_gpumux(command, result))
    assert line == (f"gpumux: error: {result}:1:1: an HDF5 file (a gpumux result?), not text: "
                    "`gpumux report FILE` reads a result; this command reads a YAML or CSV text "
                    "file"), line


def test_plan_refuses_to_write_the_best_setup_over_its_scenario(tmp_path):
    """`plan small.yaml -o small.yaml` replaced the scenario (its plan: search space) with the
    best setup."""
    scenario = tmp_path / "plan.yaml"
    scenario.write_text(PLAN.read_text())
    line = one_error(run_gpumux("plan", "plan.yaml", "-q", "-o", "./plan.yaml", cwd=tmp_path,
                                timeout=60))
    assert line == ("gpumux: error: -o ./plan.yaml: is the scenario being planned; the best "
                    "setup written there would replace it (name another file)"), line
    assert scenario.read_text() == PLAN.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["plan.yaml"]


@pytest.mark.parametrize("scenario,old,key", [
    (PLAN, "cost_per_hour: 4.0", "plan.gpus.0.cost_per_hour"),
    (TIME_SLICING, "cost_per_hour: 4.0", "gpus.0.cost_per_hour")])
def test_a_gpu_price_beyond_1e8_per_hour_is_refused(tmp_path, scenario, old, key):
    """plan.gpus cost_per_hour: 1e308 summed to infinity: `plan` said "no setup within 3 GPUs
    meets every SLO" of a space where the same tenants at 4.0 found one. Bounded as the
    cluster pools' prices are."""
    text = scenario.read_text()
    assert old in text
    path = tmp_path / "s.yaml"
    path.write_text(text.replace(old, "cost_per_hour: 1e308"))
    line = one_error(run_gpumux("validate", path, "-q"))
    assert "s.yaml:" in line and f"{key}: at most 1e+08 per GPU-hour, got 1e308" in line, line
