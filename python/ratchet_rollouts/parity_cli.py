"""`ratchet-parity` (also `python -m ratchet_rollouts.parity`): a parity check of exported rows against model
weights, as a summary or JSON; exit status 1 when a bound given is broken, 2 on a usage error."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .parity import ModelSource, ParityReport, ParityStats, check_parity
from .parity_rows import read_rows


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    model: ModelSource | dict[int, ModelSource] = args.model if args.model else dict(args.model_version)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' weight-loading bar, per version
    try:
        rows = [row for path in args.export for row in read_rows(path)]
        report = check_parity(model, rows, device=args.device)
    except (OSError, ValueError, ImportError) as error:
        print(f"ratchet-parity: {error}", file=sys.stderr)
        return 2
    failures = report.failures(args.max_mean, args.max_p99)
    if args.json:
        print(json.dumps({**report.as_dict(), "failures": failures}))
    else:
        print(summary(report))
        for reason in failures:
            print(f"FAIL: {reason}")
    return 1 if failures else 0


def summary(report: ParityReport) -> str:
    """The report for a terminal: overall, per version, the raw contrast and what was left out."""
    if report.overall is None:
        lines = [f"parity: no generated token checked ({report.rows} rows)"]
    else:
        lines = [f"parity: {report.overall.tokens} generated tokens of {report.rows} rows recomputed in float32", _line("all", report.overall)]
        if len(report.by_version) > 1:
            lines += [_line(f"version {version}", stats) for version, stats in sorted(report.by_version.items())]
        if len(report.by_sampling) > 1:
            lines += [_line(label, stats) for label, stats in sorted(report.by_sampling.items())]
    if report.raw is not None:
        lines.append(_line("raw (contrast: no temperature or truncation)", report.raw))
        if len(report.raw_by_sampling) > 1:
            lines += [_line(f"raw, {label}", stats) for label, stats in sorted(report.raw_by_sampling.items())]
    for version, count in sorted(report.unchecked_tokens.items()):
        lines.append(f"  not checked: {count} tokens of {'unknown version' if version < 0 else f'version {version}'} (no model given)")
    if report.rows_without_sampling:
        lines.append(f"  not checked: {report.rows_without_sampling} rows stored without their sampling parameters")
    if report.outside_support:
        lines.append(f"  {report.outside_support} sampled tokens have probability 0 under the recomputed sampling")
    return "\n".join(lines)


def _line(label: str, stats: ParityStats) -> str:
    return (
        f"  {label}: |Δ| mean {stats.mean_abs:.3g}, p99 {stats.p99_abs:.3g}, max {stats.max_abs:.3g}; ratio mean {stats.ratio_mean:.4f}"
        f" [{stats.ratio_min:.4f}, {stats.ratio_max:.4f}], {100 * stats.ratio_outside:.2f}% outside [0.8, 1.25]; KL k3 {stats.kl_k3:.3g}"
    )


def _version_dir(text: str) -> tuple[int, Path]:
    version, sep, directory = text.partition("=")
    if not sep or not version.strip().lstrip("-").isdigit() or not directory:
        raise argparse.ArgumentTypeError(f"expected VERSION=DIR, got {text!r}")
    return int(version), Path(directory)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ratchet-parity",
        description="Recompute every generated token's logprob under the policy version that sampled it, at its row's sampling, "
        "in float32, and compare with the stored behaviour logprobs.",
    )
    models = parser.add_mutually_exclusive_group(required=True)
    models.add_argument("--model", metavar="DIR", type=Path, help="one model directory for every policy version")
    models.add_argument("--model-version", metavar="V=DIR", type=_version_dir, action="append", help="the model of policy version V (repeat)")
    parser.add_argument("--export", metavar="FILE", action="append", required=True, help="rows from `ratchet export` or `ratchet consume`: JSON lines, Parquet or Arrow (repeat)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--max-mean", type=float, metavar="NATS", help="fail (exit 1) when mean |Δ| is above this")
    parser.add_argument("--max-p99", type=float, metavar="NATS", help="fail (exit 1) when the 99th percentile of |Δ| is above this")
    parser.add_argument("--device", default="cpu", help="torch device for the recomputation (default cpu)")
    return parser
