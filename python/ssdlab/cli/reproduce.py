"""`ssdlab reproduce` and `claims`: the registered studies and the claims ledger."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import claims
from .._core import SsdlabError
from .common import _add_grid_args, _executor_options, _failures, check_output_dir, print_table


def cmd_reproduce(args) -> int:
    from .. import studies

    if args.all:
        return _reproduce_all(args)
    if args.list or not args.name:
        reg = studies.registry()
        if not args.list:
            raise SsdlabError(f"reproduce needs a study name (registered: {', '.join(reg)}) or --list")
        rows = [
            [name, f"{_count(st.cells(True))} quick,", f"{_count(st.cells(False))} full cells", st.summary]
            for name, st in reg.items()
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(3)] if rows else []
        for r in rows:  # one line per study: name, cells of the quick and the full grid, summary
            print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}} {r[2]:>{widths[2]}}  {r[3]}")
        return 0
    folder = args.out or Path("results") / (f"{args.name}-quick" if args.quick else args.name)
    check_output_dir("--out" if args.out else "results folder", folder)
    try:
        report = studies.reproduce(args.name, quick=args.quick, out=args.out, **_run_options(args))
    except studies.CellsFailed as e:
        # The report is written and shows the failed cells; the exit status says they failed.
        print(f"wrote {e.report}")
        return _failures(e.summary, args.allow_failures)
    print(f"wrote {report}")
    return 0


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _run_options(args) -> dict:
    """How `reproduce` runs its cells: executor, scheduler address, workers, progress, traces."""
    return {**_executor_options(args), "traces": args.traces, "robust": args.robust}


def _reproduce_all(args) -> int:
    """`reproduce --all`: every registered study into DIR/NAME (or DIR/NAME-quick), then the ledger."""
    from .. import studies

    if args.name:
        raise SsdlabError(f"reproduce: give a study name or --all, not both (got `{args.name}` and --all)")
    check_output_dir("--out" if args.out else "results folder", args.out or "results")
    done, failures = studies.reproduce_all(quick=args.quick, out=args.out, **_run_options(args))
    for folder in done:
        print(f"wrote {folder / 'report.html'}")
    if done:
        print()
        print_ledger(studies.ledger(done))
    for line in failures:
        print(f"ssdlab: {line}", file=sys.stderr)
    return 1 if failures and not args.allow_failures else 0


def _add_reproduce_parser(sub) -> None:
    p = sub.add_parser("reproduce", help="run a registered study end to end (sweep, then report)")
    p.add_argument("name", nargs="?", metavar="NAME", help="study name (see --list)")
    p.add_argument("--list", action="store_true", help="list the registered studies")
    p.add_argument("--all", action="store_true", help="every registered study, one folder each under --out DIR")
    p.add_argument("--quick", action="store_true", help="the reduced grid (minutes); default is the full grid")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default results/NAME, or results/NAME-quick; with --all the folder that holds them)",
    )
    _add_grid_args(
        p,
        executor="local threads (default) or dask",
        address="an existing Dask scheduler",
        workers="local workers (default: all cores)",
        traces="real-trace directory (default $SSDLAB_TRACES, else ../shared/traces)",
    )
    p.add_argument(
        "--robust",
        action="store_true",
        help="then re-run the grid across the values the seed leaves open (claims.toml [[open]]), a setting at a time",
    )
    p.set_defaults(func=cmd_reproduce)


def print_ledger(rows, file=None) -> None:
    """The ledger as text: one block per claim, then the per-study summary (the seed's claims by
    verdict and robustness, the extensions apart)."""
    out = file or sys.stdout
    for c in rows:
        print(f"[{c.seed}] {c.study} · {c.figure} · {c.kind} · {claims.verdict_text(c).upper()}", file=out)
        print(f"  claim:    {c.claim}", file=out)
        print(f"  seed:     {c.seed_value}", file=out)
        print(f"  reading:  {c.reading}", file=out)
        print(f"  measured: {c.measured}" + (f" ({len(c.cells)} cells)" if c.cells else ""), file=out)
        if c.why:
            print(f"  why:      {c.why}", file=out)
        if c.quick:
            print(f"  quick:    {c.quick}", file=out)
        if c.robustness:
            on = f" on {', '.join(c.robustness['flips'])}" if c.robustness["flips"] else ""
            print(f"  robust:   {c.robustness['verdict']}{on} ({len(c.robustness['settings'])} settings)", file=out)
    summary = claims.summary(rows)
    if not summary:
        print("no claims: none of these results belongs to a study that declares claims", file=out)
        return
    counts = list(claims.SUMMARY_COUNTS)
    body = [[r["seed"], r["study"], r["grid"], r["results"]] + [str(r[k]) for k in counts] for r in summary]
    totals = [str(sum(r[k] for r in summary)) for k in counts]
    print(file=out)
    print_table(body + [["", "all", "", ""] + totals], ["seed", "study", "grid", "results"] + counts, file=out, left=4)


def cmd_claims(args) -> int:
    from .. import studies

    paths = args.results or ["results"]
    rows = studies.ledger(paths)
    if args.json:
        doc = {"claims": [r.to_dict() for r in rows], "summary": claims.summary(rows)}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print_ledger(rows)
    return 0


def _add_claims_parser(sub) -> None:
    p = sub.add_parser("claims", help="every seed's claims judged on study results (the claims ledger)")
    p.add_argument(
        "results",
        nargs="*",
        metavar="RESULTS_DIR",
        help="study results folders, or folders holding them (default: results)",
    )
    p.add_argument("--json", action="store_true", help="print the ledger as JSON")
    p.set_defaults(func=cmd_claims)
