"""calibration/validation/catalog_published.py and its data (data/published/): every published
point names a source documented in SOURCE.md and a GPU profile (and MIG instance) gpumux knows;
the script either compares a point or lists it as pending with gpumux's reason, never both; a
calibration point (calibration/fit/*.csv) is never scored."""
import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "calibration" / "validation"
DATA = VALIDATION / "data" / "published"
TABLES = ("solo.csv", "mig_scaling.csv", "colocation.csv", "small_batch.csv")
FIT = REPO / "calibration" / "fit"
# small_batch.csv: the statistic is the id's suffix; one per configuration is scored (the mean).
STAT = re.compile(r"-(mean|avg|p90|p95|p99|compute-infer|thr)$")


def rows(name):
    return list(csv.DictReader((DATA / name).open()))


def calibration_ids():
    return {r["id"] for p in FIT.rglob("*.csv") for r in csv.DictReader(p.open())}


def small_batch_scored():
    """small_batch.csv's scored rows: per configuration (the id without its statistic) the mean
    row (-mean, -avg or no suffix; every configuration has one), or its p90 row where the mean
    exceeds the configuration's own p99 (the slowest 1 % carry it), calibration points left
    out."""
    table = rows("small_batch.csv")
    by_id = {r["id"]: r for r in table}
    mean = [r for r in table if (STAT.search(r["id"]) is None
                                 or STAT.search(r["id"]).group(1) in ("mean", "avg"))]
    configs = {STAT.sub("", r["id"]) for r in table}
    assert len({STAT.sub("", r["id"]) for r in mean}) == len(mean) == len(configs)
    chosen = []
    for r in mean:
        config = STAT.sub("", r["id"])
        p99 = by_id.get(config + "-p99")
        if p99 and float(r["value"]) > float(p99["value"]):
            assert config + "-p90" in by_id, config
            assert float(by_id[config + "-p90"]["value"]) <= float(p99["value"]), config
            chosen.append(by_id[config + "-p90"])
        else:
            chosen.append(r)
    return chosen, [r for r in chosen if r["id"] not in calibration_ids()]


def test_a_mean_above_its_own_p99_is_scored_by_the_p90():
    """DeepLearningExamples' TF1 BERT averages exceed their own p99 in every row (run_squad.py
    averages every session.run, the compiling first ones included): their p90 is scored; a mean
    below its p99 (MLPerf's, Triton's) stays the scored statistic."""
    pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp

    def row(rid, value):
        return {"id": rid, "value": str(value)}

    scored, other = cp.scored_rows([row("a-avg", 10), row("a-p90", 4), row("a-p99", 5),
                                    row("b-mean", 3), row("b-p90", 4), row("b-p99", 6),
                                    row("c-mean", 9), row("c-p90", 4)])
    assert [r["id"] for r in scored] == ["a-p90", "b-mean", "c-mean"] and other == 5
    table = rows("small_batch.csv")
    tf1 = [r for r in table if r["source"] == "dle-bert-tf"]
    assert len(tf1) >= 48
    chosen, _ = small_batch_scored()
    assert all(r["id"].endswith("-p90") for r in chosen if r["source"] == "dle-bert-tf")
    assert not any(r["id"].endswith("-p90") for r in chosen if r["source"] != "dle-bert-tf")


def test_tensorflow_points_state_their_harness_and_precision():
    """FasterTransformer's TF-XLA timing is a bare session.run loop (no per-request host time,
    no copies); DeepLearningExamples' TF1 BERT runs under Estimator.predict with its fitted
    per-request time, with XLA, at TF32; every other point takes the profile's host time."""
    pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    table = {r["id"]: r for r in rows("small_batch.csv")}
    ft = table["bertb-ft-a100-tfxla-b8-s384"]
    assert cp.small_batch_runtime(ft) == "tensorflow-xla"
    assert cp.harness_host(ft) == {"per_request": "0ns", "input_bytes": "0B",
                                   "output_bytes": "0B"}
    dle = table["bertlarge-tf1-a100-40gb-s384-b8-p90"]
    assert cp.small_batch_runtime(dle) == "tensorflow-xla" and cp.RAN_AT[dle["source"]] == "tf32"
    report = (FIT / "TF-RUNTIME.md").read_text()
    fitted_h = re.search(r"\*\*H = ([0-9.]+) ms\*\*", report)
    assert fitted_h, "TF-RUNTIME.md names no H"
    host = cp.harness_host(dle)
    assert host is not None and set(host) == {"per_request"}
    assert float(host["per_request"].removesuffix("us")) == pytest.approx(
        float(fitted_h.group(1)) * 1e3)
    others = [r for r in table.values() if r["source"] not in ("ft-bert", "dle-bert-tf")]
    assert all(cp.harness_host(r) is None for r in others)
    assert cp.harness_host(table["bertb-ft-a100-fttf-b8-s384"]) is None  # FT's op: its runtime


def test_dle_triton_bert_engines_run_the_onnx_parsers_graph():
    """DeepLearningExamples' Triton BERT builds its TensorRT engine from the model's ONNX export
    with TensorRT's ONNX parser (no demoBERT plugins), for Triton's tensorrt backend and ONNX
    Runtime's TensorRT execution provider alike: runtime tensorrt-onnx. The same README's ONNX
    Runtime backend keeps onnxruntime and its TorchScript rows pytorch; other sources' TensorRT
    execution provider rows (the ResNet-50 README) keep tensorrt."""
    pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    table = rows("small_batch.csv")
    by_runtime = {}
    for r in table:
        if r["source"] != "dle-bertl-triton":
            continue
        sw = r["software"]
        kind = ("ort-trt" if "TensorRT execution provider" in sw else
                "trt" if r["runtime"] == "tensorrt" else r["runtime"])
        by_runtime.setdefault(kind, set()).add(cp.small_batch_runtime(r))
    assert by_runtime == {"ort-trt": {"tensorrt-onnx"}, "trt": {"tensorrt-onnx"},
                          "onnxruntime": {"onnxruntime"}, "pytorch": {"pytorch"}}
    rn50 = [r for r in table if r["source"] == "dle-rn50-triton"
            and "TensorRT execution provider" in r["software"]]
    assert rn50 and all(cp.small_batch_runtime(r) == "tensorrt" for r in rn50)


def test_mlperf_bert_points_run_their_harnesss_attention_kernel(tmp_path):
    """MLPerf's BERT harnesses run TensorRT's variable-length plugin with the max_seqlen shape
    their CUDA graphs carry: NVIDIA's own harness (LWIS) the query's own length, so each length
    runs its bucket's kernel (`attention_seq_len: bucket`); the Triton harness 384 at every
    length (`attention_seq_len: 384`). Every such point says so in its setup, and gpumux accepts
    the workload it becomes (SQuAD's lengths, all within the plugin's 384)."""
    yaml = pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    bert = [r for r in rows("small_batch.csv") if cp.is_mlperf_bert(r)]
    triton = [r for r in bert if "Triton" in r["software"]]
    lwis = [r for r in bert if "Triton" not in r["software"]]
    assert triton and lwis
    assert {cp.mlperf_attention_seq_len(r) for r in triton} == {384}
    assert {cp.mlperf_attention_seq_len(r) for r in lwis} == {"bucket"}
    assert max(cp.squad_seq_len()["empirical"]["values"]) <= 384
    for r in (lwis[0], triton[0]):
        spec = dict(cp.catalog_workload(dict(r, software="", note=""), "inference"),
                    seq_len=cp.squad_seq_len(),
                    attention_seq_len=cp.mlperf_attention_seq_len(r), runtime="tensorrt")
        path = tmp_path / f"{r['id']}.yaml"
        path.write_text(yaml.safe_dump(cp.scenario(r["id"], r["profile"], [
            cp.tenant("w", cp.closed_loop(spec))])))
        proc = run_gpumux("validate", path)
        assert proc.returncode == 0, proc.stderr


def test_every_tensorrt_point_states_how_it_launched_and_runs_so():
    """The cuda_graph column (data/published/SOURCE.md): every row of solo.csv and small_batch.csv
    says true or false, every MLPerf LWIS / BERT-harness row is a graph (each SingleStream config
    sets use_graphs), the Triton TensorRT backend's rows with graph capture disabled are not, and
    the scenario a row becomes carries `cuda_graph: true` exactly where the column says so; a
    value other than true or false is refused."""
    pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    for name in ("solo.csv", "small_batch.csv"):
        for r in rows(name):
            assert r["cuda_graph"] in ("true", "false"), (name, r["id"])
            phase = "training" if r.get("phase") == "training" else "inference"
            spec = cp.catalog_workload(r, phase)
            if spec is not None:
                assert spec.get("cuda_graph", False) == (r["cuda_graph"] == "true"), r["id"]
    small = rows("small_batch.csv")
    own = [r for r in small if r["source"].startswith("mlperf") and "Triton" not in r["software"]]
    assert own and all(r["cuda_graph"] == "true" for r in own)
    disabled = [r for r in small if "graph capture disabled" in r["software"]]
    assert disabled and all(r["cuda_graph"] == "false" for r in disabled)
    assert any(r["cuda_graph"] == "false" for r in small if r["source"].startswith("mlperf"))
    with pytest.raises(SystemExit):
        cp.catalog_workload(dict(small[0], cuda_graph="yes"), "inference")


def test_tally_points_run_in_tallys_gemm_library_and_fp32():
    """Tally's harness runs every job with REPLACE_CUBLAS (its CUTLASS GEMMs) and its trainers
    without TF32: the server alone, beside each trainer, and each trainer name the
    tally-cutlass library kernel-families.yaml defines, the trainers in fp32; no other
    source's point names a library."""
    yaml = pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    families = yaml.safe_load((REPO / "calibration" / "workloads" /
                               "kernel-families.yaml").read_text())
    assert cp.HARNESS_GEMM["tally"] in families["gemm_libraries"]
    solo = {r["id"]: r for r in rows("solo.csv")}[cp.TALLY_SOLO]
    spec = cp.catalog_workload(solo, "inference")
    assert spec["gemm_library"] == "tally-cutlass" and spec["runtime"] == "onnxruntime"
    for name, batch, seq, dtype, _ in cp.BE_WORKLOAD.values():
        be = cp.catalog_workload({"workload": name, "batch": str(batch), "seq_len": seq,
                                  "dtype": dtype, "software": "PyTorch", "source": "tally"},
                                 "training")
        assert be["gemm_library"] == "tally-cutlass" and be["dtype"] == "fp32", name
    others = [r for r in rows("solo.csv") if r["source"] != "tally"]
    assert others and all("gemm_library" not in (cp.catalog_workload(
        r, "training" if r["phase"] == "training" else "inference") or {}) for r in others)


def test_tally_trainers_run_pytorchs_native_convolution():
    """Tally's PyTorch is built without cuDNN: its trainers name conv_library: native, its
    ONNX Runtime server does not, and no other source's point names one."""
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    solo = {r["id"]: r for r in rows("solo.csv")}[cp.TALLY_SOLO]
    assert "conv_library" not in cp.catalog_workload(solo, "inference")
    for name, batch, seq, dtype, _ in cp.BE_WORKLOAD.values():
        be = cp.catalog_workload({"workload": name, "batch": str(batch), "seq_len": seq,
                                  "dtype": dtype, "software": "PyTorch", "source": "tally"},
                                 "training")
        assert be["conv_library"] == "native", name
    others = [r for r in rows("solo.csv") if r["source"] != "tally"]
    assert others and all("conv_library" not in (cp.catalog_workload(
        r, "training" if r["phase"] == "training" else "inference") or {}) for r in others)


def test_fastertransformer_vit_points_run_its_layers_and_its_examples_harness():
    """FasterTransformer's C++ ViT example runs FasterTransformer's layers (runtime
    fastertransformer, though its software names TensorRT), on device-resident tensors without
    a host step (no copies, no per-request time) and with cuBLASLt given no workspace
    (gemm_workspace: false), its host thread's time per operator the fitted one
    (calibration/fit/ft-vit-host.yaml, stage S7); no other source's point names gemm_workspace,
    and every other point naming TensorRT keeps a TensorRT runtime."""
    pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    import catalog_published as cp
    import yaml
    per_op = yaml.safe_load((FIT / "ft-vit-host.yaml").read_text())["per_op"]
    vit = [r for r in rows("solo.csv") if r["source"] == "ft-vit"]
    assert len(vit) == 9  # ViT-B/16 b1-32, ViT-L/16 b8-32 (validation); ViT-L/16 b1 (calibration)
    for r in vit:
        assert "TensorRT" in r["software"]
        spec = cp.catalog_workload(r, "inference")
        assert spec["runtime"] == "fastertransformer", r["id"]
        assert spec["gemm_workspace"] is False, r["id"]
        assert spec["host"] == {"per_request": "0ns", "input_bytes": "0B", "output_bytes": "0B",
                                "per_op": per_op}
    others = [r for r in rows("solo.csv") if r["source"] != "ft-vit"]
    assert others
    for r in others:
        spec = cp.catalog_workload(r, "training" if r["phase"] == "training" else "inference")
        if spec is None:
            continue
        assert "gemm_workspace" not in spec, r["id"]
        if "tensorrt" in r["software"].lower():
            assert spec["runtime"].startswith("tensorrt"), r["id"]


def test_every_point_has_a_documented_source_and_a_known_profile():
    source_md = (DATA / "SOURCE.md").read_text()
    models = run_gpumux("models", check=0).stdout
    known = {line.split()[0] for line in models.splitlines()[1:] if line.strip()}
    ids = set()
    for table in TABLES:
        for row in rows(table):
            assert row["id"] not in ids, row["id"]
            ids.add(row["id"])
            assert f"`{row['source']}`" in source_md, (table, row["id"], row["source"])
            assert row["profile"] in known, (table, row["id"], row["profile"])
            value = float(row.get("value") or row["hp_shared"])
            assert value > 0 and math.isfinite(value), row["id"]
    for row in rows("mig_scaling.csv"):
        proc = run_gpumux("mig", row["profile"], "--check", row["mig_instance"])
        assert proc.returncode == 0, (row["id"], proc.stdout, proc.stderr)
    for row in rows("small_batch.csv"):
        assert row["metric"] in ("latency", "throughput"), row["id"]
    # Every calibration point is a published point of these tables, with the same value.
    published = {r["id"]: r for t in TABLES for r in rows(t)}
    for p in FIT.rglob("*.csv"):
        for r in csv.DictReader(p.open()):
            assert r["id"] in published, (p.name, r["id"])
            assert float(r["value"]) == float(published[r["id"]]["value"]), r["id"]
    for row in rows("colocation.csv"):
        assert row["mechanism"] in ("mps", "time-slicing"), row["id"]
        assert float(row["hp_shared"]) > float(row["hp_solo"]), row["id"]  # sharing costs latency


def test_script_compares_or_lists_pending_with_a_reason(tmp_path):
    pytest.importorskip("yaml")
    out = tmp_path / "c.json"
    proc = subprocess.run([sys.executable, str(VALIDATION / "catalog_published.py"), "--gpumux",
                           GPUMUX, "--report", str(tmp_path / "c.md"), "--json", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(out.read_text())
    calib = calibration_ids()
    points = sum(1 for r in rows("solo.csv") if r["id"] not in calib) + len(rows("colocation.csv"))
    mig = rows("mig_scaling.csv")
    points += sum(1 for r in mig if not r["mig_instance"].startswith("7g"))  # ratios to 7g
    # small_batch.csv: each scored point alone, and each slice's ratio to the whole GPU of the
    # same source, machine, workload, batch, seq_len and harness (Triton or not), unless either
    # side is a calibration point.
    mean, scored = small_batch_scored()
    points += len(scored)

    def key(r):
        return (r["source"], r["gpu"].split(", one ")[0], r["workload"], r["batch"], r["seq_len"],
                "triton" in r["software"].lower())

    whole = {key(r): r for r in mean if not r["mig_instance"]}
    ratios = [r for r in mean if r["mig_instance"] and key(r) in whole]
    fair = [r for r in ratios if r["id"] not in calib and whole[key(r)]["id"] not in calib]
    points += len(fair)
    assert len(res["rows"]) == points
    assert len(fair) >= 8  # MLPerf ResNet-50 on 1g.10gb (A100) and 1g.6gb (A30)
    ids = {r["id"] for r in res["rows"]}
    assert not ids & calib  # a published point is calibration or validation, never both
    left = res["left_out"]
    assert set(left["calibration"]) == calib
    assert left["ratios"] == len(ratios) - len(fair)
    assert left["statistics"] == len(rows("small_batch.csv")) - len(mean)
    assert {r["id"] + "-ratio" for r in fair} <= ids
    sections = {r["id"]: r["section"] for r in res["rows"]}
    for r in scored:
        assert sections[r["id"]] == ("MIG alone" if r["mig_instance"] else "solo"), r["id"]
    # A small_batch.csv MIG instance gpumux does not have is listed pending, never compared.
    pending = {r["id"] for r in res["rows"] if r["error"] is None}
    for r in scored:
        if r["mig_instance"]:
            proc = run_gpumux("mig", r["profile"], "--check", r["mig_instance"])
            assert proc.returncode == 0 or r["id"] in pending, (r["id"], proc.stdout)
    # MLPerf's BERT queries run at SQuAD v1.1's sample lengths (calibration/data/squad-v1.1):
    # every one is compared, unless its MIG instance is not one gpumux has.
    mlperf_bert = [r for r in res["rows"]
                   if r["source"].startswith("mlperf-inf") and "bert" in r["setup"].split()[0]]
    assert len(mlperf_bert) >= 50
    for r in mlperf_bert:
        assert "SQuAD v1.1 lengths" in r["setup"], r["id"]
        assert r["error"] is not None or "is not a MIG profile" in r["pending"], r
    assert sum(r["error"] is not None for r in mlperf_bert) >= 45
    for r in res["rows"]:
        if r["error"] is None:
            assert r["predicted"] is None and r["pending"].strip(), r
        else:
            assert r["pending"] == "" and r["predicted"] > 0, r
            assert math.isclose(r["error"], r["predicted"] / r["measured"] - 1, rel_tol=1e-12)
    for section, s in res["summary"].items():
        assert s["compared"] + s["pending"] == s["points"], section
    report = (tmp_path / "c.md").read_text()
    assert report.startswith("# Catalog workloads against published measurements")
    assert f"Left out: {len(calib)} published points are calibration points" in report
    assert "calibration/fit/REPORT.md" in report
    assert report.count("\n| ") >= len(res["rows"])
    # Every catalog entry and LLM card appears in the coverage table with the points that run
    # it; its counts and errors are those of the rows that name it.
    workloads = REPO / "calibration" / "workloads"
    entries = {p.stem for p in workloads.glob("*.yaml") if p.stem != "kernel-families"}
    entries |= {p.stem for p in (workloads / "llm").glob("*.yaml")}
    covered = {c["entry"]: c for c in res["coverage"]}
    assert set(covered) == entries
    for name, c in covered.items():
        mine = [r for r in res["rows"] if name in r["entries"]]
        done = [abs(r["error"]) for r in mine if r["error"] is not None]
        assert (c["points"], c["compared"]) == (len(mine), len(done)), name
        assert c["max_abs"] == (max(done) if done else None), name
        assert f"| `{name}` | {c['points']} | {c['compared']} |" in report, name
    assert covered["vit-b16"]["compared"] > 0 and covered["resnet50"]["compared"] > 0
