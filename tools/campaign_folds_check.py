"""Whether a new campaign's rows teach a latency model about layers like the campaign's.

    D=packages/spio-perfmodel/data/nvidia_h100_80gb_hbm3
    uv run python tools/campaign_folds_check.py --pass fprop --kernel c57157e88726 \
        --base $D/seed*/conv2d_gw8_configs_fprop.csv \
        --new $D/pending/seed48_launched/conv2d_gw8_configs_fprop.csv [--folds 4] [--splits 0 1 2]

`spio-perfmodel evaluate --held-out NEW` scores the new layers with a model of the base rows
alone: how far the model carries to them today. This asks the next question, whether their
rows would help: the new campaign's layers (less those the base rows also hold, such as the
standard layers every campaign times) are split into --folds folds, and each fold is scored
twice, by a model of the base rows and by one of the base rows and the new campaign's other
folds. Both score the same held-out layers, so the two lines compare like with like. Each
--splits seed deals the layers into folds another way. A campaign whose rows help here
still needs `tools/gpu-candidate-check.sh` on the GPU: the new rows also move the trees'
picks on layers unlike the campaign's.
"""

from __future__ import annotations

import argparse

import numpy as np

from spio.perfmodel._data import ConfigTime, read_config_times
from spio.perfmodel._evaluate import LayerResult, evaluate_held_out


def fold_results(
    base: list[ConfigTime], new: list[ConfigTime], folds: int, split: int
) -> dict[str, list[LayerResult]]:
    """Every held-out layer's result without and with the new campaign's other folds."""
    base_layers = {row.params for row in base}
    layers = sorted({row.params for row in new} - base_layers, key=str)
    if len(layers) < folds:
        raise SystemExit(
            f"--folds {folds}: the new rows hold only {len(layers)} layers not in --base"
        )
    order = np.random.default_rng(split).permutation(len(layers))
    results: dict[str, list[LayerResult]] = {"without": [], "with": []}
    for fold in range(folds):
        held = {layers[i] for i in order[fold::folds]}
        held_rows = [row for row in new if row.params in held]
        others = [row for row in new if row.params not in held]
        results["without"] += evaluate_held_out(base, held_rows).layers
        results["with"] += evaluate_held_out(base + others, held_rows).layers
    return results


def summary(results: list[LayerResult]) -> str:
    """The picks' slowdown over each layer's fastest timed config, and the regrets' p95."""
    model = np.array([result.regret for result in results])
    chosen = np.array([result.chosen_regret for result in results])
    return (
        f"model {np.exp(np.log1p(model).mean()):.3f}x (p95 regret {np.percentile(model, 95):.1%}), "
        f"choose_config {np.exp(np.log1p(chosen).mean()):.3f}x "
        f"(p95 {np.percentile(chosen, 95):.1%})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pass", dest="pass_name", required=True, choices=["fprop", "dgrad", "wgrad"]
    )
    parser.add_argument("--kernel", required=True, help="the sources digest of the rows to use")
    parser.add_argument("--base", nargs="+", required=True, help="the rows models train on today")
    parser.add_argument("--new", nargs="+", required=True, help="the new campaign's rows")
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--splits", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)

    def rows(paths: list[str]) -> list[ConfigTime]:
        table = read_config_times(paths)
        return [r for r in table.rows if r.kernel == args.kernel and r.pass_name == args.pass_name]

    base, new = rows(args.base), rows(args.new)
    if not new:
        raise SystemExit(f"--new holds no {args.pass_name} rows of kernel {args.kernel}")
    for split in args.splits:
        results = fold_results(base, new, args.folds, split)
        count = len(results["without"])
        print(f"{args.pass_name}, split {split}, {count} held-out layers:")
        for name in ("without", "with"):
            print(f"  {name:7s} the new rows: {summary(results[name])}")


if __name__ == "__main__":
    main()
