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

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel._data import ConfigTime, read_config_times
from spio.perfmodel._evaluate import Evaluation, LayerResult, evaluate_held_out


def new_layers(base: list[ConfigTime], new: list[ConfigTime]) -> list[Conv2dGw8Params]:
    """The new campaign's layers that the base rows do not hold, in a fixed order."""
    return sorted({row.params for row in new} - {row.params for row in base}, key=str)


def without_results(base: list[ConfigTime], new: list[ConfigTime]) -> Evaluation:
    """Every new layer scored by one model of the base rows: the base rows hold none of
    them, so each fold's model without the new rows would be this same model."""
    held = set(new_layers(base, new))
    return evaluate_held_out(base, [row for row in new if row.params in held])


def with_results(
    base: list[ConfigTime], new: list[ConfigTime], folds: int, split: int
) -> Evaluation:
    """Every new layer scored by a model of the base rows and the new campaign's other
    folds; split deals the layers into folds."""
    layers = new_layers(base, new)
    if len(layers) < folds:
        raise SystemExit(
            f"--folds {folds}: the new rows hold only {len(layers)} layers not in --base"
        )
    order = np.random.default_rng(split).permutation(len(layers))
    results: list[LayerResult] = []
    for fold in range(folds):
        held = {layers[i] for i in order[fold::folds]}
        held_rows = [row for row in new if row.params in held]
        others = [row for row in new if row.params not in held]
        results += evaluate_held_out(base + others, held_rows).layers
    return Evaluation(new[0].pass_name, tuple(results))


def summary(evaluation: Evaluation) -> str:
    """The picks' slowdown over each layer's fastest timed config, and the regrets' p95."""
    return (
        f"model {evaluation.slowdown('model'):.3f}x (p95 regret {evaluation.p95_regret:.1%}), "
        f"choose_config {evaluation.slowdown('chosen'):.3f}x "
        f"(p95 {evaluation.chosen_p95_regret:.1%})"
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
        return list(read_config_times(paths).select(args.pass_name, kernel=args.kernel).rows)

    base, new = rows(args.base), rows(args.new)
    if not new:
        raise SystemExit(f"--new holds no {args.pass_name} rows of kernel {args.kernel}")
    without: Evaluation | None = None
    for split in args.splits:
        with_new = with_results(base, new, args.folds, split)  # (refuses too many folds first)
        without = without or without_results(base, new)
        print(f"{args.pass_name}, split {split}, {len(with_new.layers)} held-out layers:")
        print(f"  without the new rows: {summary(without)}")
        print(f"  with    the new rows: {summary(with_new)}")


if __name__ == "__main__":
    main()
