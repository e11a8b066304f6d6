"""Figures and checks of the timed-basics study: the timing model against exact queueing results,
then what it shows on the default device."""

from __future__ import annotations

import json

import numpy as np
from ssdlab.analytic import closed_network_iops, md1_response, mm1_response
from ssdlab.report import figures as F
from ssdlab.report.html import text_row


def _grid(df, name):
    """Rows of one [[grid]], recognised by the axes the cell varied."""
    ok = df[df["status"] == "ok"]
    axes = ok["axes"].map(lambda a: set(json.loads(a)))
    keys = {
        "single queue": {"nand.service", "workload.iops"},
        "closed network": {"run.queue_depth", "device.channels", "device.chips_per_channel"},
        "queue depth": {"workload.read_fraction", "run.queue_depth"},
        "gc": {"device.op"},
    }[name]
    return ok[axes.map(lambda a: a == keys)]


def _single_queue(df):
    """The single-queue cells with ρ, the exact mean response and the model's name."""
    g = _grid(df, "single queue")
    rho = g["workload.iops"].astype(float) * g["nand.read_us"].astype(float) / 1e6
    exact = [
        (mm1_response if svc == "exponential" else md1_response)(float(s), float(r))
        for svc, s, r in zip(g["nand.service"], g["nand.read_us"], rho, strict=True)
    ]
    return g.assign(rho=rho, exact=exact)


def _closed(df):
    g = _grid(df, "closed network")
    dies = (
        g["device.channels"].astype(int)
        * g["device.chips_per_channel"].astype(int)
        * g["device.dies_per_chip"].astype(int)
    )
    exact = [
        closed_network_iops(int(d), int(n), float(s))
        for d, n, s in zip(dies, g["run.queue_depth"], g["nand.read_us"], strict=True)
    ]
    return g.assign(dies=dies, exact=exact, ratio=g["throughput.iops"].to_numpy(dtype=float) / np.asarray(exact))


def figures(df):
    out = []
    sq = _single_queue(df)
    for service, model, fn in (("exponential", "M/M/1", mm1_response), ("fixed", "M/D/1", md1_response)):
        part = sq[sq["nand.service"] == service]
        if part.empty:
            continue
        s = float(part["nand.read_us"].iloc[0])
        rhos = np.linspace(0.0, float(part["rho"].max()), 100)
        overlay = (rhos, [fn(s, r) for r in rhos], f"{model}, exact")
        fig = F.line(part, x="rho", y="latency.read.mean_us", overlay=overlay)
        fig.axes[0].set_xlabel("utilisation ρ = arrival rate × mean read time")
        fig.axes[0].set_title(f"one die, Poisson arrivals, {service} {s:g} µs reads", fontsize=8)
        out.append((f"Mean read response time against load on one die: simulated (markers) and {model} (dashed)", fig))
    cn = _closed(df)
    if not cn.empty:
        fig = F.line(cn, x="run.queue_depth", y="ratio", by="dies", logx=True)
        fig.axes[0].set_xlabel("requests outstanding N (closed loop)")
        fig.axes[0].set_ylabel("throughput / D·N/((N+D−1)·S)")
        fig.axes[0].axhline(1.0, color="#888888", linestyle="--", linewidth=0.8)
        out.append(
            (
                "Closed loop of N requests on D dies (exponential 50 µs reads, uniformly random dies): "
                "simulated throughput over the exact D·N/((N+D−1)·S), one line per D",
                fig,
            )
        )
    qd = _grid(df, "queue depth")
    if not qd.empty:
        for y, what in (("latency.all.mean_us", "mean"), ("latency.all.p99_us", "p99")):
            fig = F.line(qd, x="throughput.iops", y=y, by="workload.read_fraction", logx=True)
            fig.axes[0].set_xlabel("throughput (IOPS); the queue depth grows along each line")
            fig.axes[0].set_yscale("log")
            out.append(
                (
                    f"IOPS against {what} latency on 8 channels × 4 dies (filled, greedy GC) for queue "
                    "depths 1 … 256: random reads (read share 1), random writes (0) and 70/30 writes/reads (0.3)",
                    fig,
                )
            )
    gc = _grid(df, "gc")
    if not gc.empty:
        for tail in (False, True):
            fig = F.distribution_cdf(gc, "latency.read_ns", by="device.op", tail=tail, logx=not tail)
            view = "the tail, 0.9 to 0.9999" if tail else "the whole distribution"
            out.append(
                (
                    "Read latency of a 70/30 write/read mix at QD 32, without GC (ρ = 1: the writes fit in "
                    f"free blocks) and with it (ρ = 0.07): {view}",
                    fig,
                )
            )
    return out


def sections(df):
    out = []
    sq = _single_queue(df)
    if not sq.empty:
        rows = [
            text_row(
                [
                    "M/M/1" if r["nand.service"] == "exponential" else "M/D/1",
                    f"{r['rho']:.2f}",
                    f"{r['latency.read.mean_us']:.2f}",
                    f"{r['exact']:.2f}",
                    f"{(r['latency.read.mean_us'] / r['exact'] - 1) * 100:+.2f}%",
                    f"{r['util.die.mean']:.3f}",
                ]
            )
            for _, r in sq.sort_values(["nand.service", "rho"]).iterrows()
        ]
        out.append(
            (
                "Single queue: simulated against exact mean response time",
                "<p>One die, Poisson arrivals (open loop), reads of mean S; M/M/1: S/(1−ρ), M/D/1 "
                "(Pollaczek–Khinchine): S + ρS/(2(1−ρ)). Near saturation the sample mean converges "
                "slowly (at ρ = 0.9 its standard error over 10<sup>6</sup> requests is about 2%); "
                "tests/timed.rs checks each within four standard errors from batch means.</p>"
                "<table><tr><th>model</th><th>ρ</th><th>simulated (µs)</th><th>exact (µs)</th>"
                "<th>difference</th><th>die utilisation</th></tr>" + "".join(rows) + "</table>",
            )
        )
    cn = _closed(df)
    if not cn.empty:
        rows = [
            text_row(
                [
                    int(r["dies"]),
                    int(r["run.queue_depth"]),
                    f"{r['throughput.iops']:,.0f}",
                    f"{r['exact']:,.0f}",
                    f"{(r['ratio'] - 1) * 100:+.2f}%",
                ]
            )
            for _, r in cn.sort_values(["dies", "run.queue_depth"]).iterrows()
        ]
        out.append(
            (
                "Closed loop: simulated against exact throughput",
                "<p>N requests outstanding, each a read of a uniformly random die with exponential service "
                "of mean S, no think time: a closed network whose throughput is exactly D·N/((N+D−1)·S). "
                "The run's throughput includes its start and its drain.</p>"
                "<table><tr><th>dies D</th><th>N</th><th>simulated (IOPS)</th><th>exact (IOPS)</th>"
                "<th>difference</th></tr>" + "".join(rows) + "</table>",
            )
        )
    gc = _grid(df, "gc")
    if not gc.empty:
        rows = [
            text_row(
                [
                    f"{r['device.op']:g}",
                    f"{int(r['gc.victims']):,}",
                    *(f"{r[f'latency.read.{p}_us']:,.0f}" for p in ("p50", "p99", "p9999")),
                    f"{r['latency.read.max_us']:,.0f}",
                ]
            )
            for _, r in gc.sort_values("device.op", ascending=False).iterrows()
        ]
        out.append(
            (
                "Read latency with and without GC",
                "<table><tr><th>ρ</th><th>GC victims</th><th>p50 (µs)</th><th>p99 (µs)</th>"
                "<th>p99.99 (µs)</th><th>max (µs)</th></tr>" + "".join(rows) + "</table>",
            )
        )
    return out
