"""calibration/data/squad-v1.1: the token lengths of MLPerf's BERT samples (SOURCE.md there).

The committed counts cannot be recomputed offline (the SQuAD dev set and the vocabulary are not
in the repository), so this checks what can be: the files agree with each other and with the
script's binning; the script's tokenizer and windowing follow their stated rules on inputs whose
answer is known by hand; and gpumux runs `seq_len.yaml` as a distribution whose drawn lengths
have the histogram's mean and weights within sampling error."""
import csv
import importlib.util
import math
import sys
from pathlib import Path

import h5py
import numpy as np
import yaml

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
SQUAD = REPO / "calibration" / "data" / "squad-v1.1"


def script():
    spec = importlib.util.spec_from_file_location("squad_lengths", SQUAD / "squad_lengths.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["squad_lengths"] = module
    spec.loader.exec_module(module)
    return module


def histogram():
    return {int(r["seq_len"]): int(r["samples"])
            for r in csv.DictReader((SQUAD / "lengths.csv").open())}


def distribution():
    return yaml.safe_load((SQUAD / "seq_len.yaml").read_text())["empirical"]


def test_the_files_agree_with_each_other_and_the_script():
    sq = script()
    counts = histogram()
    assert sum(counts.values()) == sq.MLPERF_SAMPLES
    assert min(counts) >= 3 + 1 and max(counts) == sq.MAX_SEQ_LENGTH  # [CLS] [SEP] [SEP] + text
    lengths = [n for n, c in counts.items() for _ in range(c)]
    d = distribution()
    assert [[v, c] for v, c in sq.binned(lengths)] == [list(p) for p in zip(d["values"],
                                                                             d["weights"])]
    # Each bin's point lies in its bin; the binned mean is the exact mean within half a token.
    for v in d["values"]:
        assert any((n - 1) // sq.BIN == (v - 1) // sq.BIN for n in counts)
    exact = sum(lengths) / len(lengths)
    binned = sum(v * w for v, w in zip(d["values"], d["weights"])) / sum(d["weights"])
    assert abs(binned - exact) <= 0.5
    # The header states the exact mean the data has; docs/workloads.md quotes the file.
    text = (SQUAD / "seq_len.yaml").read_text()
    assert f"mean {exact:.2f} tokens" in text
    docs = (REPO / "docs" / "workloads.md").read_text()
    for line in text.splitlines():
        if line.strip().startswith(("values:", "weights:")):
            assert line.strip() in docs, line
    assert f"mean {exact:.1f} tokens" in docs


def toy_vocab(tmp_path, words):
    """A 30,522-entry vocabulary with BERT's fixed ids and `words` in place of unused entries."""
    entries = [f"[unused{i}]" for i in range(30522)]
    entries[0], entries[100:104], entries[1996] = "[PAD]", ["[UNK]", "[CLS]", "[SEP]",
                                                              "[MASK]"], "the"
    for i, w in enumerate(words):
        entries[2000 + i] = w
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(entries) + "\n")
    return path


def test_tokenizer_follows_bert_rules(tmp_path):
    sq = script()
    wp = sq.WordPiece(toy_vocab(tmp_path, ["un", "##aff", "##able", "cafe", ",", "?", "a", "##b",
                                           "中"]))
    assert wp.count("unaffable") == 3  # un ##aff ##able: greedy longest match first
    assert wp.count("UnAffable") == 3  # lower case
    assert wp.count("Café") == 1  # accents stripped
    assert wp.count("the,the?") == 4  # punctuation splits
    assert wp.count("xyz") == 1 and wp.count("unxyz") == 1  # no split: one [UNK] per word
    assert wp.count("a" + "b" * 99) == 100 and wp.count("a" + "b" * 100) == 1  # > 100 chars
    assert wp.count("中中") == 2  # CJK characters are words
    assert wp.count("the\u00a0the\x00") == 2  # Unicode space separates, control dropped
    bad = tmp_path / "bad.txt"
    bad.write_text("[PAD]\n")
    try:
        sq.WordPiece(bad)
    except SystemExit as e:
        assert "30,522" in str(e)
    else:
        raise AssertionError("a wrong vocabulary was accepted")


def test_windows_follow_max_seq_length_and_doc_stride(tmp_path):
    sq = script()
    wp = sq.WordPiece(toy_vocab(tmp_path, ["a"]))
    for query, doc in [(1, 5), (3, 380), (3, 381), (10, 1000), (70, 700), (64, 317), (64, 318)]:
        q = min(query, sq.MAX_QUERY_LENGTH)
        room = sq.MAX_SEQ_LENGTH - q - 3
        lengths, questions = sq.sample_lengths([(" ".join(["a"] * doc), [" ".join(["a"] * query)])],
                                               wp)
        assert questions == 1
        # Windows start every doc_stride tokens until one reaches the end of the context.
        windows = 1 if doc <= room else 1 + math.ceil((doc - room) / sq.DOC_STRIDE)
        assert len(lengths) == windows, (query, doc)
        assert all(n == q + room + 3 for n in lengths[:-1])
        last_start = (windows - 1) * sq.DOC_STRIDE
        assert lengths[-1] == q + min(room, doc - last_start) + 3
        assert max(lengths) <= sq.MAX_SEQ_LENGTH


def scenario(tmp_path, name, seq_len, duration):
    text = yaml.safe_dump({
        "name": name, "seed": 7, "duration": duration, "warmup": "0s",
        "gpus": [{"name": "gpu0", "model": "a100-80gb", "sharing": {"mode": "exclusive"}}],
        "tenants": [{"name": "w", "device": "gpu0", "workload": {
            "model": "bert-large", "batch": 1, "dtype": "int8", "runtime": "tensorrt",
            "seq_len": seq_len,
            "arrivals": {"process": "closed", "concurrency": 1, "think": "1ms"}}}]},
        sort_keys=False)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def service_times(tmp_path, name, seq_len, duration):
    path = scenario(tmp_path, name, seq_len, duration)
    run_gpumux("run", path, "-o", tmp_path / f"{name}.h5", "-q", check=0)
    with h5py.File(tmp_path / f"{name}.h5", "r") as f:
        req = f["requests"][()]
    req = req[req["finish_ns"] >= 0]
    return req["finish_ns"] - req["start_ns"]


def test_gpumux_draws_the_histogram_lengths(tmp_path):
    """Alone on a GPU, a request's time is a function of its length: one run per length gives
    that function, which names the length of every request of the distribution's run."""
    d = distribution()
    time_of = {}
    for v in d["values"]:
        times = np.unique(service_times(tmp_path, f"len{v}", {"empirical": {"values": [v]}},
                                        "20ms"))
        assert len(times) == 1, (v, times)  # deterministic per length
        time_of[int(times[0])] = v
    assert len(time_of) == len(d["values"])  # distinct: a time names its length
    times = service_times(tmp_path, "squad", yaml.safe_load((SQUAD / "seq_len.yaml").read_text()),
                          "10s")
    drawn = np.array([time_of[int(t)] for t in times])
    n = len(drawn)
    assert n > 3000
    weights = np.array(d["weights"], dtype=float) / sum(d["weights"])
    values = np.array(d["values"], dtype=float)
    mean = float(values @ weights)
    sd = math.sqrt(float(((values - mean) ** 2) @ weights))
    assert abs(drawn.mean() - mean) < 4 * sd / math.sqrt(n), (drawn.mean(), mean)
    for v, w in zip(values, weights):
        share = float(np.mean(drawn == v))
        assert abs(share - w) < 4 * math.sqrt(w * (1 - w) / n) + 1 / n, (v, share, w)
