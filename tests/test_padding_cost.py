"""Seed 002's block-padding cost model (§3.2, Eq. 1–4) in ssdlab.analytic, against the seed's own
numbers and costs worked by hand from its formulas."""

import pytest
from ssdlab.analytic import full_merge_cost, full_merge_cost_refs, padding_cost, padding_cost_refs

SEED = {"n_p": 128, "r": 1, "w": 6, "e": 10}


@pytest.mark.parametrize("s_c", [0, 1, 10, 50, 64, 100, 127, 128])
def test_one_cluster_matches_the_seeds_closed_forms(s_c):
    # "C_BP = 906 − S_c, C_FM = 6·S_c + 916" for N_p = 128, R = 1, W = 6, E = 10.
    assert padding_cost(s_c, **SEED) == 906 - s_c
    assert full_merge_cost(s_c, **SEED) == 6 * s_c + 916
    # The defaults are the seed's values.
    assert padding_cost(s_c) == 906 - s_c and full_merge_cost(s_c) == 6 * s_c + 916


def test_equations_1_and_2_by_term():
    # N_p = 64, R = 2, W = 5, E = 20, S_c = 10:
    # C_BP = 54·2 + 64·5 + 20 = 108 + 320 + 20 = 448;
    # C_FM = 10·5 + 64·7 + 40 = 50 + 448 + 40 = 538.
    assert padding_cost(10, n_p=64, r=2, w=5, e=20) == 448
    assert full_merge_cost(10, n_p=64, r=2, w=5, e=20) == 538


def test_multi_reference_costs_by_hand():
    # The seed's two-reference overflow, S_c^1 = 100, S_c^2 = 60: ΣS_c = 160 > 128, so one full
    # block (6·128 + 916 = 1684) and the rest, 32 pages: 6·32 + 916 = 1108; 2792 in all.
    assert full_merge_cost_refs([100, 60], **SEED) == (6 * 128 + 916) + 6 * 32 + 916 == 2792
    # Padding each: (906 − 100) + (906 − 60) = 806 + 846 = 1652.
    assert padding_cost_refs([100, 60], **SEED) == 1652
    # Three references summing to 90 ≤ 128: no overflow: 6·90 + 916 = 1456, against
    # 3·906 − 90 = 2628 with padding.
    assert full_merge_cost_refs([30, 20, 40], **SEED) == 1456
    assert padding_cost_refs([30, 20, 40], **SEED) == 2628
    # Five of 64 (ΣS_c = 320 = 2·128 + 64): 2·1684 + 6·64 + 916 = 4668; padding 5·842 = 4210.
    assert full_merge_cost_refs([64] * 5, **SEED) == 4668
    assert padding_cost_refs([64] * 5, **SEED) == 4210
    # One reference: Eq. 3 and 4 are Eq. 2 and 1.
    for s in (1, 77, 128):
        assert padding_cost_refs([s], **SEED) == padding_cost(s, **SEED)
    for s in (1, 77, 127):
        assert full_merge_cost_refs([s], **SEED) == full_merge_cost(s, **SEED)
    # Eq. 3 as printed at an exact multiple: 128 pages give one full block plus an empty rest.
    assert full_merge_cost_refs([128], **SEED) == 1684 + 916


def test_the_seeds_rules():
    # "Without re-reference, padding is always cheaper": 906 − S_c < 6·S_c + 916 for every S_c.
    for s in range(0, 129):
        assert padding_cost(s, **SEED) < full_merge_cost(s, **SEED)
    # "With re-references and ΣS_c ≤ 128 (below a whole block), not padding is cheaper".
    for n in range(2, 6):
        for total in range(n, 128):
            sizes = [total // n] * (n - 1) + [total - (total // n) * (n - 1)]
            assert full_merge_cost_refs(sizes, **SEED) < padding_cost_refs(sizes, **SEED), (n, sizes)
    # The break-even behind that boundary: with two references the costs meet where the sum
    # reaches a block, ΣS_c = N_p, for any R, W, E (C_FM = ΣS·W + N_p(R+W) + 2E against
    # 2N_p(R+W) + 2E − ΣS·R); one page less and the full merge is cheaper.
    for n_p, r, w, e in [(128, 1, 6, 10), (64, 2, 5, 20), (256, 1, 12, 40)]:
        kw = {"n_p": n_p, "r": r, "w": w, "e": e}
        below = full_merge_cost_refs([n_p // 2, n_p // 2 - 1], **kw)
        assert below < padding_cost_refs([n_p // 2, n_p // 2 - 1], **kw)
        at = (n_p * w) + n_p * (r + w) + 2 * e  # the continuous extension of Eq. 3 at ΣS = N_p
        assert at == padding_cost_refs([n_p // 2, n_p // 2], **kw)


@pytest.mark.parametrize("bad", [-1, 129, 200])
def test_cluster_sizes_outside_the_block_are_refused(bad):
    with pytest.raises(ValueError, match="S_c"):
        padding_cost(bad, **SEED)
    with pytest.raises(ValueError, match="S_c"):
        full_merge_cost_refs([10, bad], **SEED)
    with pytest.raises(ValueError, match="at least one"):
        padding_cost_refs([], **SEED)
