"""The parity check's numpy side: its statistics, how it reads exported rows and which tokens it recomputes, and when
it fails. The recomputation itself (torch) runs in the real-server suite against vLLM's own sampler and a real vLLM
(test/real-servers/parity.real.ts)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from ratchet_rollouts.parity import ParityReport, ParityStats, check_parity, parity_stats
from ratchet_rollouts.parity_report import CheckedTokens, parity_report, sampling_label
from ratchet_rollouts.parity_cli import main, summary
from ratchet_rollouts.parity_rows import MalformedRow, Sampling, generated_tokens, read_rows, row_sampling, rows_of


def test_identical_logprobs_have_no_gap_a_ratio_of_one_and_no_kl() -> None:
    stored = np.log(np.array([0.5, 0.25, 0.9, 1e-6]))
    stats = parity_stats(stored, stored.copy())
    assert stats == ParityStats(tokens=4, mean_abs=0, p99_abs=0, max_abs=0, ratio_mean=1, ratio_min=1, ratio_max=1, ratio_outside=0, kl_k3=0)


def test_gaps_ratios_and_k3_are_those_of_recomputed_minus_stored() -> None:
    stored = np.zeros(4)
    recomputed = np.array([math.log(2), 0.0, -math.log(2), 0.1])
    stats = parity_stats(stored, recomputed)
    assert stats.tokens == 4
    assert stats.mean_abs == pytest.approx((2 * math.log(2) + 0.1) / 4)
    assert stats.max_abs == pytest.approx(math.log(2))
    assert stats.p99_abs == pytest.approx(np.quantile(np.abs(recomputed), 0.99))
    assert (stats.ratio_min, stats.ratio_max) == (pytest.approx(0.5), pytest.approx(2.0))
    assert stats.ratio_mean == pytest.approx((2 + 1 + 0.5 + math.exp(0.1)) / 4)
    assert stats.ratio_outside == 0.5  # 2 and 0.5 lie outside [0.8, 1.25]; exp(0.1) = 1.105 does not
    k3 = np.mean(np.exp(recomputed) - 1 - recomputed)
    assert stats.kl_k3 == pytest.approx(k3)
    assert stats.kl_k3 > 0


def test_the_ratio_band_is_closed() -> None:
    stats = parity_stats(np.zeros(2), np.log(np.array([0.8, 1.25])))
    assert stats.ratio_outside == 0


def test_as_dict_names_every_field() -> None:
    stats = parity_stats(np.array([-1.0]), np.array([-1.5]))
    assert list(stats.as_dict()) == ["tokens", "mean_abs", "p99_abs", "max_abs", "ratio_mean", "ratio_min", "ratio_max", "ratio_outside", "kl_k3"]
    assert json.loads(json.dumps(stats.as_dict()))["max_abs"] == 0.5


@pytest.mark.parametrize(
    ("stored", "recomputed", "message"),
    [
        ([-1.0, -2.0], [-1.0], "2 stored logprobs but 1 recomputed"),
        ([], [], "no tokens"),
        ([-1.0, float("nan")], [-1.0, -1.0], "1 non-finite stored"),
        ([-1.0, -1.0], [float("-inf"), -1.0], "1 non-finite recomputed logprobs \\(first at index 0"),
        ([[-1.0]], [[-1.0]], "1-D arrays"),
    ],
)
def test_refuses_what_it_cannot_compare(stored: Any, recomputed: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parity_stats(np.array(stored), np.array(recomputed))


def two_turn_row() -> dict[str, Any]:
    """The seed layout: two sequences (prompt + answer, then the longer context + answer), feedback masked."""
    return {
        "trajectory_id": "run/q1/0",
        "status": "completed",
        # sequence 1: prompt 10 11, answer 12 13; sequence 2: prompt 10 11 12 13 14 (14: feedback), answer 15
        "packed_input_ids": [10, 11, 12, 13, 10, 11, 12, 13, 14, 15],
        "prompt_mask": [True, True, False, False, True, True, True, True, True, False],
        # L - 1 per sequence: token j's logprob at j - 1; prompt positions carry 0
        "packed_logprobs": [0.0, -0.12, -0.13, 0.0, 0.0, 0.0, 0.0, -0.15],
        "token_versions": [-1, -1, 3, 4, -1, -1, -1, -1, -1, 4],
        "seqlens": [4, 6],
        "temperature": 0.7,
        "top_p": 0.9,
        "top_k": -1,
        "min_p": 0.0,
        "repetition_penalty": 1.0,
    }


def test_finds_each_generated_token_with_its_stored_logprob_and_version() -> None:
    row = two_turn_row()
    sampling = row_sampling(row)
    assert sampling == Sampling(0.7, 0.9, -1, 0.0, 1.0)
    first, second = generated_tokens(row, sampling)
    assert first.input_ids.tolist() == [10, 11, 12, 13]
    assert first.positions.tolist() == [2, 3]
    assert first.stored.tolist() == [-0.12, -0.13]
    assert first.versions.tolist() == [3, 4]
    assert second.input_ids.tolist() == [10, 11, 12, 13, 14, 15]
    assert second.positions.tolist() == [5]
    assert second.stored.tolist() == [-0.15]
    assert second.versions.tolist() == [4]


def test_rows_without_token_versions_have_version_minus_one() -> None:
    row = {**two_turn_row(), "token_versions": []}
    assert [s.versions.tolist() for s in generated_tokens(row, Sampling(1, 1, -1, 0, 1))] == [[-1, -1], [-1]]


def test_rows_without_their_sampling_are_told_apart() -> None:
    assert row_sampling({**two_turn_row(), "top_p": None}) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"packed_logprobs": [0.0] * 9}, "9 logprobs for 2 sequences of 10 tokens"),
        ({"seqlens": [4, 5]}, "seqlens summing to 9"),
        ({"prompt_mask": [True] * 9}, "9 mask entries"),
    ],
)
def test_refuses_rows_whose_columns_disagree(change: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedRow, match=f"trajectory run/q1/0: .*{message}"):
        generated_tokens({**two_turn_row(), **change}, Sampling(1, 1, -1, 0, 1))


def arrow_table() -> pa.Table:
    row = two_turn_row()
    row["prompt_mask"] = [int(m) for m in row["prompt_mask"]]  # int8 in the Arrow export
    return pa.Table.from_pylist([row], schema=pa.schema([
        ("trajectory_id", pa.utf8()), ("status", pa.utf8()),
        ("packed_input_ids", pa.list_(pa.int32())), ("prompt_mask", pa.list_(pa.int8())), ("packed_logprobs", pa.list_(pa.float32())),
        ("token_versions", pa.list_(pa.int32())), ("seqlens", pa.list_(pa.int32())),
        ("temperature", pa.float64()), ("top_p", pa.float64()), ("top_k", pa.int32()), ("min_p", pa.float64()), ("repetition_penalty", pa.float64()),
    ]))


def test_reads_json_lines_parquet_and_arrow_files_and_streams_alike(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text(json.dumps(two_turn_row()) + "\n\n")
    pq.write_table(arrow_table(), tmp_path / "rows.parquet")
    with ipc.new_file(tmp_path / "rows.arrow", arrow_table().schema) as writer:
        writer.write_table(arrow_table())
    with ipc.new_stream(tmp_path / "rows.stream", arrow_table().schema) as writer:
        writer.write_table(arrow_table())
    for name in ("rows.jsonl", "rows.parquet", "rows.arrow", "rows.stream"):
        [row] = read_rows(tmp_path / name)
        [first, second] = generated_tokens(row, row_sampling(row))  # type: ignore[arg-type]
        assert (first.positions.tolist(), second.positions.tolist()) == ([2, 3], [5]), name
        assert first.stored == pytest.approx([-0.12, -0.13]), name
    assert [r["trajectory_id"] for r in rows_of(arrow_table())] == ["run/q1/0"]
    assert [r["trajectory_id"] for r in rows_of(SimpleNamespace(table=arrow_table()))] == ["run/q1/0"]  # a consumed Batch


def report(overall: ParityStats | None, outside_support: int = 0) -> ParityReport:
    by = {} if overall is None else {0: overall}
    return ParityReport(overall, by_version=by, by_sampling={}, raw=overall, raw_by_sampling={}, rows=1, unchecked_tokens={5: 12}, outside_support=outside_support)


def test_bounds_fail_a_report_above_them_or_with_nothing_checked() -> None:
    close = parity_stats(np.zeros(100), np.full(100, 0.01))
    far = parity_stats(np.zeros(100), np.linspace(0, 0.5, 100))
    assert report(close).failures(0.02, 0.1) == []
    assert report(far).failures() == []  # no bound given, nothing to break
    assert report(far).failures(0.02, 0.1) == [f"mean |Δ| {far.mean_abs:.3g} > 0.02", f"p99 |Δ| {far.p99_abs:.3g} > 0.1"]
    assert report(far).failures(max_p99=1) == []
    assert report(None).failures(0.02) == ["no generated token was checked"]
    assert report(close, outside_support=2).failures(0.02) == ["2 sampled tokens are outside the recomputed sampling distribution"]


def test_the_summary_names_the_numbers_and_what_was_not_checked() -> None:
    text = summary(report(parity_stats(np.zeros(4), np.full(4, 0.01))))
    assert "4 generated tokens of 1 rows" in text
    assert "|Δ| mean 0.01, p99 0.01, max 0.01" in text
    assert "not checked: 12 tokens of version 5 (no model given)" in text
    assert json.loads(json.dumps(report(None).as_dict())) == {
        "overall": None, "by_version": {}, "by_sampling": {}, "raw": None, "raw_by_sampling": {}, "rows": 1, "unchecked_tokens": {"5": 12}, "rows_without_sampling": 0, "outside_support": 0,
    }


def test_the_command_refuses_a_bad_model_version_and_an_unreadable_export(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["--model-version", "v1=/models/one", "--export", "rows.jsonl"])
    assert usage.value.code == 2
    assert "expected VERSION=DIR, got 'v1=/models/one'" in capsys.readouterr().err
    assert main(["--model", "/models/one", "--export", str(tmp_path / "missing.jsonl")]) == 2
    assert "ratchet-parity: [Errno 2]" in capsys.readouterr().err


def test_tokens_of_versions_without_a_model_are_counted_not_checked() -> None:
    # No model is loaded (nor torch imported) when no version has one.
    checked = check_parity({7: "/no/such/model"}, [two_turn_row(), {**two_turn_row(), "temperature": None}])
    assert checked.overall is None and checked.raw is None
    assert (checked.rows, checked.unchecked_tokens, checked.rows_without_sampling) == (2, {3: 1, 4: 2}, 1)


def test_reports_by_version_and_by_sampling_and_counts_tokens_outside_the_support() -> None:
    t07, t1 = sampling_label(Sampling(0.7, 0.9, -1, 0, 1)), sampling_label(Sampling(1, 1, -1, 0, 1))
    assert t07 == "temperature=0.7 top_p=0.9 top_k=-1 min_p=0 repetition_penalty=1"
    stored = np.array([-1.0, -2.0])
    checked = parity_report(
        [
            CheckedTokens(3, t07, stored, np.array([-1.0, -2.1]), np.array([-1.5, -2.5])),
            CheckedTokens(4, t1, stored, np.array([-1.2, float("-inf")]), stored),
        ],
        rows=2, unchecked={}, rows_without_sampling=0,
    )
    assert checked.overall is not None and checked.overall.tokens == 3
    assert checked.overall.max_abs == pytest.approx(0.2)
    assert {v: s.tokens for v, s in checked.by_version.items()} == {3: 2, 4: 1}
    assert {label: s.max_abs for label, s in checked.by_sampling.items()} == {t07: pytest.approx(0.1), t1: pytest.approx(0.2)}
    assert checked.raw is not None and checked.raw.tokens == 4
    assert {label: s.max_abs for label, s in checked.raw_by_sampling.items()} == {t07: pytest.approx(0.5), t1: 0}
    assert checked.outside_support == 1
