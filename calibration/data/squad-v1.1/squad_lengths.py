#!/usr/bin/python3
"""Token lengths of MLPerf Inference's BERT queries: the SQuAD v1.1 dev set as BERT reads it.

MLPerf Inference's BERT benchmark (mlcommons/inference, language/bert/squad_QSL.py) turns every
question of the SQuAD v1.1 dev set into one or more query samples: `[CLS] question [SEP]
context-window [SEP]`, with the question cut to max_query_length = 64 WordPiece tokens, the
context split into windows of at most max_seq_length - question - 3 tokens that start every
doc_stride = 128 tokens, max_seq_length = 384. A sample's sequence length is its real token
count (the reference pads every sample to 384; NVIDIA's TensorRT harness runs the unpadded
length). LoadGen draws the SingleStream queries uniformly from all samples, so every sample has
the same weight.

This script recomputes those lengths with its own BERT tokenizer (the uncased BasicTokenizer +
WordPiece algorithm of Devlin et al. 2019, google-research/bert `tokenization.py`, written here
from its description: clean, split CJK characters, whitespace split, lower case, strip accents,
split punctuation, greedy longest-match-first WordPiece with `##` continuations, [UNK] for a word
that does not split or is over 100 characters) and the windowing above. Nothing is fitted.

Inputs (neither is in the repository; SOURCE.md says where they are):
* the dev set, either `--squad dev-v1.1.json` or `--explorer GIT_DIR` (a clone of
  rajpurkar/SQuAD-explorer: its gh-pages branch renders the same 48 dev articles as HTML, one
  page each, explore/1.1/dev/*.html, every paragraph and question; pages are read with `git show`);
* `--vocab vocab.txt`, BERT's uncased WordPiece vocabulary (30,522 entries).

Outputs (in --out, default this directory):
* lengths.csv: seq_len,samples: how many MLPerf samples have each length;
* seq_len.yaml: the distribution as a gpumux `seq_len:` value (docs/workloads.md), one point per
  16-token bin at the bin's mean length (rounded), weighted by its samples.

Usage: /usr/bin/python3 calibration/data/squad-v1.1/squad_lengths.py \
           (--squad dev-v1.1.json | --explorer SQuAD-explorer/.git) --vocab vocab.txt [--out DIR]
"""
from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_SEQ_LENGTH = 384
MAX_QUERY_LENGTH = 64
DOC_STRIDE = 128
BIN = 16
# The dev set's size (rajpurkar.github.io/SQuAD-explorer: 10,570 dev questions, 48 articles) and
# the number of samples MLPerf's QSL builds from it (language/bert README and every NVIDIA
# SingleStream log: performance_sample_count 10833): the script checks both.
DEV_QUESTIONS = 10570
MLPERF_SAMPLES = 10833


# ---- BERT's uncased tokenizer -------------------------------------------------------------

def is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    # Every non-alphanumeric ASCII character counts, as in BERT ("$", "^", "`" are not Unicode P*).
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


def basic_words(text: str) -> list:
    """Lower-cased, accent-free words and punctuation marks of `text`."""
    spaced = []
    for ch in text:
        if ord(ch) in (0, 0xFFFD) or is_control(ch):
            continue
        if is_whitespace(ch):
            spaced.append(" ")
        elif is_cjk(ch):
            spaced.append(f" {ch} ")
        else:
            spaced.append(ch)
    words = []
    for word in "".join(spaced).split():
        plain = "".join(c for c in unicodedata.normalize("NFD", word.lower())
                        if unicodedata.category(c) != "Mn")
        current = ""
        for ch in plain:
            if is_punctuation(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


class WordPiece:
    def __init__(self, vocab_path: Path):
        entries = vocab_path.read_text(encoding="utf-8").split("\n")
        if entries and entries[-1] == "":
            entries.pop()
        self.vocab = {e: i for i, e in enumerate(entries)}
        # The uncased vocabulary's fixed ids (google-research/bert uncased_L-*_H-*_A-*).
        expected = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103,
                    "the": 1996}
        if len(entries) != 30522 or any(self.vocab.get(k) != v for k, v in expected.items()):
            raise SystemExit(f"{vocab_path}: not BERT's uncased vocabulary (30,522 entries, "
                             f"[CLS] = 101, 'the' = 1996); got {len(entries)} entries")
        self.cache: dict = {}

    def pieces(self, word: str) -> int:
        """How many WordPiece tokens `word` becomes (1 for [UNK])."""
        if word in self.cache:
            return self.cache[word]
        count = 0
        if len(word) > 100:
            count = 1
        else:
            start = 0
            while start < len(word):
                end = len(word)
                while end > start and ("##" if start else "") + word[start:end] not in self.vocab:
                    end -= 1
                if end == start:  # no piece fits: the whole word is one [UNK]
                    count = 1
                    break
                count += 1
                start = end
        self.cache[word] = count
        return count

    def count(self, text: str) -> int:
        return sum(self.pieces(w) for w in basic_words(text))


# ---- the dev set ----------------------------------------------------------------------------

def read_json(path: Path) -> list:
    """[(context, [question, ...]), ...] of dev-v1.1.json."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [(p["context"], [q["question"] for q in p["qas"]])
            for article in data for p in article["paragraphs"]]


PARAGRAPH = re.compile(r'<div class="para-wrap">.*?<pre>(.*?)</pre>(.*?)(?=<div class="para-wrap">|$)',
                       re.S)
QUESTION = re.compile(r'<strong class="question">(.*?)</strong>', re.S)


def read_explorer(git_dir: Path, ref: str) -> list:
    """The same as read_json, from SQuAD-explorer's rendered dev pages (HTML-escaped text)."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", ref,
                              "explore/1.1/dev/"], capture_output=True, text=True, check=True)
    pages = [p for p in listing.stdout.split() if p.endswith(".html")
             and not p.endswith("/index.html")]
    out = []
    for page in sorted(pages):
        text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{ref}:{page}"],
                              capture_output=True, check=True).stdout.decode("utf-8")
        for context, rest in PARAGRAPH.findall(text):
            out.append((html.unescape(context), [html.unescape(q) for q in QUESTION.findall(rest)]))
    if not out:
        raise SystemExit(f"{git_dir}: no explore/1.1/dev/*.html page at {ref}")
    return out


# ---- MLPerf's samples -----------------------------------------------------------------------

def sample_lengths(paragraphs: list, wp: WordPiece) -> tuple[list, int]:
    """Every sample's sequence length, and the number of questions."""
    lengths, questions = [], 0
    for context, qs in paragraphs:
        # SQuAD's reader splits the context on " \t\r\n" and U+202F; each piece is tokenized.
        doc = sum(wp.count(w) for w in re.split("[ \t\r\n\u202f]+", context) if w)
        for q in qs:
            questions += 1
            query = min(wp.count(q), MAX_QUERY_LENGTH)
            room = MAX_SEQ_LENGTH - query - 3
            start = 0
            while True:
                window = min(doc - start, room)
                lengths.append(query + window + 3)
                if start + window >= doc:
                    break
                start += min(window, DOC_STRIDE)
    return lengths, questions


def binned(lengths: list) -> list:
    """[(value, samples)]: one point per BIN-token bin at its samples' mean length, rounded."""
    bins: dict = {}
    for n in lengths:
        bins.setdefault((n - 1) // BIN, []).append(n)
    return [(round(sum(v) / len(v)), len(v)) for _, v in sorted(bins.items())]


def quantile(sorted_lengths: list, q: float) -> int:
    return sorted_lengths[min(len(sorted_lengths) - 1, int(q * len(sorted_lengths)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--squad", type=Path, help="dev-v1.1.json")
    src.add_argument("--explorer", type=Path, help="git dir of rajpurkar/SQuAD-explorer")
    ap.add_argument("--ref", default="gh-pages", help="the explorer's branch (gh-pages)")
    ap.add_argument("--vocab", type=Path, required=True, help="BERT uncased vocab.txt")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    wp = WordPiece(args.vocab)
    paragraphs = read_json(args.squad) if args.squad else read_explorer(args.explorer, args.ref)
    lengths, questions = sample_lengths(paragraphs, wp)
    print(f"{len(paragraphs)} paragraphs, {questions} questions, {len(lengths)} samples")
    if questions != DEV_QUESTIONS or len(lengths) != MLPERF_SAMPLES:
        print(f"expected {DEV_QUESTIONS} questions and {MLPERF_SAMPLES} samples", file=sys.stderr)
        return 1
    counts: dict = {}
    for n in lengths:
        counts[n] = counts.get(n, 0) + 1
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "lengths.csv").open("w") as f:
        f.write("seq_len,samples\n")
        f.writelines(f"{n},{c}\n" for n, c in sorted(counts.items()))
    ordered = sorted(lengths)
    mean = sum(lengths) / len(lengths)
    points = binned(lengths)
    stats = (f"mean {mean:.2f} tokens; p10 {quantile(ordered, 0.1)}, p50 {quantile(ordered, 0.5)}, "
             f"p90 {quantile(ordered, 0.9)}, max {ordered[-1]}; "
             f"{sum(1 for n in lengths if n == MAX_SEQ_LENGTH)} samples at {MAX_SEQ_LENGTH}")
    with (args.out / "seq_len.yaml").open("w") as f:
        f.write("# MLPerf Inference BERT (SQuAD v1.1 dev, max_seq_length 384, doc_stride 128,\n"
                f"# max_query_length 64): {len(lengths)} samples, {stats}.\n"
                f"# One point per {BIN}-token bin at the bin's mean length, weighted by its "
                "samples.\n# Written by squad_lengths.py (SOURCE.md); data CC BY-SA 4.0.\n")
        f.write("empirical:\n")
        f.write("  values: [" + ", ".join(str(v) for v, _ in points) + "]\n")
        f.write("  weights: [" + ", ".join(str(c) for _, c in points) + "]\n")
    binned_mean = sum(v * c for v, c in points) / len(lengths)
    print(stats)
    print(f"binned ({len(points)} points): mean {binned_mean:.2f} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
