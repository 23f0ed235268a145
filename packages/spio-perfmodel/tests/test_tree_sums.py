"""TreeSums: XGBoost's dense prediction called directly gives inplace_predict's margins."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from spio.kernels.conv2d_gw8.params import Conv2dGw8Params
from spio.perfmodel import shipped_model
from spio.perfmodel._features import columns_matrix
from spio.perfmodel._space import space_columns
from spio.perfmodel._tree_sums import TreeSums

LAYER = Conv2dGw8Params.make(96, 64, 64, 64)


def _booster_and_features() -> tuple[object, np.ndarray]:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    return model._booster, columns_matrix("wgrad", LAYER, space_columns("wgrad", LAYER))


def test_margins_are_inplace_predicts_to_the_bit() -> None:
    booster, features = _booster_and_features()
    rounds = booster.num_boosted_rounds()  # type: ignore[attr-defined]
    sums = TreeSums(booster)
    first = sums(features, 0, 30)
    np.testing.assert_array_equal(first, booster.inplace_predict(features, iteration_range=(0, 30)))
    # The stages of a screen: each adds its trees to the margins of the one before.
    rows = features[:300]
    second = sums(rows, 30, 100, first[:300])
    expected = booster.inplace_predict(rows, iteration_range=(30, 100), base_margin=first[:300])
    np.testing.assert_array_equal(second, expected)
    whole = booster.inplace_predict(rows[:50])
    np.testing.assert_array_equal(sums(rows[:50], 100, rounds, second[:50]), whole)
    # A call without a base margin after one with it starts from the base score again.
    np.testing.assert_array_equal(sums(rows[:50], 0, rounds), whole)
    # Rows that are no float32 C-contiguous matrix are converted first.
    np.testing.assert_array_equal(sums(rows[:50:2].astype(np.float64), 0, rounds), whole[::2])


def test_threads_each_get_their_own_margins() -> None:
    booster, features = _booster_and_features()
    sums = TreeSums(booster)
    blocks = [features[i : i + 100 + i // 10] for i in range(0, 1500, 100)]

    def margins(block: np.ndarray) -> np.ndarray:
        return sums(block, 20, 80, np.linspace(-1, 1, len(block), dtype=np.float32))

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(margins, blocks * 4))
    for block, result in zip(blocks * 4, results, strict=True):
        base = np.linspace(-1, 1, len(block), dtype=np.float32)
        expected = booster.inplace_predict(block, iteration_range=(20, 80), base_margin=base)
        np.testing.assert_array_equal(result, expected)


def test_a_base_margin_of_other_rows_is_refused() -> None:
    from xgboost.core import XGBoostError

    booster, features = _booster_and_features()
    with pytest.raises(XGBoostError, match="base_margin"):
        TreeSums(booster)(features[:5], 0, 10, np.zeros(3, dtype=np.float32))


def test_a_model_pickles_with_its_tree_sums() -> None:
    model = shipped_model("wgrad", "NVIDIA H200")
    assert model is not None
    copy = pickle.loads(pickle.dumps(model))
    assert copy.best_config(LAYER) == model.best_config(LAYER)


def test_the_installed_xgboost_takes_the_direct_path() -> None:
    booster, _ = _booster_and_features()
    assert TreeSums(booster).direct


@pytest.mark.parametrize("breakage", ["no library", "other margins"])
def test_without_a_working_c_api_the_margins_come_from_inplace_predict(
    monkeypatch: pytest.MonkeyPatch, breakage: str
) -> None:
    import spio.perfmodel._tree_sums as tree_sums

    if breakage == "no library":
        monkeypatch.setattr(tree_sums, "_xgboost_library", lambda: None)
    else:  # an XGBoost whose C functions mean something else than the ones tested

        def shifted(self: TreeSums, *args: object) -> np.ndarray:
            return np.zeros(1, dtype=np.float32) + 1e9

        monkeypatch.setattr(TreeSums, "_direct", shifted)
    booster, features = _booster_and_features()
    sums = TreeSums(booster)
    assert not sums.direct
    base = np.linspace(-1, 1, 40, dtype=np.float32)
    expected = booster.inplace_predict(features[:40], iteration_range=(5, 60), base_margin=base)
    np.testing.assert_array_equal(sums(features[:40], 5, 60, base), expected)
