#!/usr/bin/env python3
"""tools/bench/report.py -- turn the raw figures of tools/bench/run into
a Markdown table, a JSON file and an SVG bar chart.

usage: report.py META.tsv RAW.tsv OUTSTEM
writes OUTSTEM.md, OUTSTEM.json and OUTSTEM.svg, and OUTSTEM.scaling.svg
when a workload ran at three or more thread counts

META.tsv, one item a line, fields separated by tabs:
    KEY  VALUE                          date, host, cpus, cpu_model, command, ...
    alloc  NAME  PATH  VERSION          in the order of the table
    variant  NAME                       arenalloc with other options (--tuned)
    reference  NAME                     a yardstick, not an allocator (the
                                        harness floor): in its own table only
    step  NAME  WORKLOAD  PRIMARY  COMMAND
    note  TEXT
RAW.tsv, one line per figure of one run:
    STEP  ALLOC  ROUND  result  NAME  VALUE  UNIT  lower|higher
    STEP  ALLOC  ROUND  series  NAME  V1 V2 ...
    STEP  ALLOC  ROUND  fail    REASON

Every ratio is arranged so that below 1.0 means arenalloc did better:
for a figure where lower is better it is arenalloc / best peer, where
higher is better it is best peer / arenalloc.  The best peer is the best
median among the allocators other than arenalloc (and its --tuned
variants, which are shown but never taken as the best peer).  A reference
(the harness floor of malloc-test, floor_alloc.c) is no allocator: it is
left out of every table but its own, where each allocator's figure is
given as a share of the floor's.
"""

import json
import math
import statistics
import sys
from html import escape

SUBJECT = "arenalloc"
COLOURS = ["#d62728", "#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd",
           "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def fmt(v, whole=False):
    """A number with about four significant digits, no exponent; WHOLE
    for counts, which have no fraction."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000 or whole:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    if a >= 1:
        return f"{v:.3f}"
    return f"{v:.4g}"


def shown(value, unit):
    """Value and unit as the tables show them (KiB as MiB)."""
    if unit == "KiB" and value is not None:
        return value / 1024, "MiB"
    return value, unit


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def agg_words(meta):
    """How the rounds of a figure are summed up, for the report's text."""
    return "best rounds" if meta.get("aggregate") == "best" else "medians"


def paired_ratios(fig, a, b):
    """[round, ratio] of a's run against b's run of the same round, for
    the rounds both have: below 1.0 means a did better."""
    lower = fig["better"] == "lower"
    theirs = dict(fig["rounds"].get(b, []))
    out = []
    for rnd, v in sorted(fig["rounds"].get(a, [])):
        t = theirs.get(rnd)
        if t is not None and t > 0 and v > 0:
            out.append([rnd, v / t if lower else t / v])
    return out


def load(meta_path, raw_path):
    meta = {"allocators": [], "steps": [], "notes": [], "variants": [],
            "references": []}
    for row in read_tsv(meta_path):
        if row[0] == "alloc":
            meta["allocators"].append(
                {"name": row[1], "library": row[2] or None,
                 "version": row[3] if len(row) > 3 else ""})
        elif row[0] == "step":
            meta["steps"].append(
                {"name": row[1], "workload": row[2], "primary": row[3],
                 "command": row[4] if len(row) > 4 else ""})
        elif row[0] == "note":
            meta["notes"].append(row[1])
        elif row[0] == "variant":
            meta["variants"].append(row[1])
        elif row[0] == "reference":
            meta["references"].append(row[1])
        else:
            meta[row[0]] = row[1] if len(row) > 1 else ""

    aggregate = "best" if meta.get("aggregate") == "best" else "median"
    every = [a["name"] for a in meta["allocators"]]
    names = [a for a in every if a not in meta["references"]]
    steps = {s["name"]: dict(s, figures={}, series={}, failures={})
             for s in meta["steps"]}
    for row in read_tsv(raw_path):
        step, alloc, rnd, kind = row[0], row[1], int(row[2]), row[3]
        s = steps[step]
        if kind == "result":
            name, value, unit, better = row[4], float(row[5]), row[6], row[7]
            fig = s["figures"].setdefault(
                name, {"unit": unit, "better": better, "rounds": {}})
            fig["rounds"].setdefault(alloc, []).append([rnd, value])
        elif kind == "series":
            vals = [float(v) for v in row[5].split()] if len(row) > 5 else []
            s["series"].setdefault(row[4], {}).setdefault(alloc, []).append(
                {"round": rnd, "values": vals})
        elif kind == "fail":
            s["failures"].setdefault(alloc, []).append(
                {"round": rnd, "reason": row[4] if len(row) > 4 else ""})

    for s in steps.values():
        for fig in s["figures"].values():
            fig["median"] = {a: statistics.median(v for _, v in fig["rounds"][a])
                             for a in every if a in fig["rounds"]}
            lower = fig["better"] == "lower"
            # The best round: the one other work on the machine disturbed
            # least (--best; for CPU cost on a shared machine).
            fig["best"] = {a: (min if lower else max)(v for _, v in fig["rounds"][a])
                           for a in every if a in fig["rounds"]}
            # The references' figures go aside, for their own table.
            fig["reference"] = {a: fig[aggregate][a] for a in meta["references"]
                                if a in fig[aggregate]}
            fig["value"] = {a: v for a, v in fig[aggregate].items()
                            if a not in meta["references"]}
            peers = {a: v for a, v in fig["value"].items()
                     if a != SUBJECT and a not in meta["variants"]}
            best = None
            if peers:
                pick = min if lower else max
                best_name = pick(peers, key=peers.get)
                best = {"allocator": best_name, "value": peers[best_name]}
            fig["best_peer"] = best
            fig["ratio"] = None
            mine = fig["value"].get(SUBJECT)
            if best is not None and mine is not None and mine > 0 and best["value"] > 0:
                fig["ratio"] = (mine / best["value"] if lower
                                else best["value"] / mine)
            # The same ratio round by round (arenalloc against that peer's
            # run of the same round, which ran minutes apart at most): how
            # far the machine's noise moves it.  A range that spans 1.00
            # means this run did not decide which of the two is faster.
            fig["round_ratios"] = (paired_ratios(fig, SUBJECT, best["allocator"])
                                   if best is not None else [])
            rr = [r for _, r in fig["round_ratios"]]
            fig["round_range"] = [min(rr), max(rr)] if len(rr) > 1 else None
            # Each --tuned variant against arenalloc's defaults, round by
            # round (below 1.00: the variant did better).  The median of
            # these paired ratios is steadier than the ratio of two
            # medians on a noisy machine: both runs of a round met about
            # the same disturbance.
            fig["variant_ratios"] = {}
            for var in meta["variants"]:
                pairs = [r for _, r in paired_ratios(fig, var, SUBJECT)]
                if pairs:
                    fig["variant_ratios"][var] = {
                        "median": statistics.median(pairs),
                        "range": [min(pairs), max(pairs)],
                        "rounds": len(pairs)}
            # Each allocator against each reference: its share of the
            # reference's figure (1.00: as fast as the floor), and
            # arenalloc's share round by round.
            fig["share_of_reference"] = {}
            for ref, rv in fig["reference"].items():
                shares = {a: (rv / v if lower else v / rv)
                          for a, v in fig["value"].items() if v > 0 and rv > 0}
                rounds = [r for _, r in paired_ratios(fig, ref, SUBJECT)]
                fig["share_of_reference"][ref] = {
                    "shares": shares,
                    "subject_rounds": [min(rounds), max(rounds)] if len(rounds) > 1 else None}
            # Each allocator against the best of all (the chart's bars).
            allv = fig["value"]
            fig["to_best"] = {}
            if allv:
                top = (min if lower else max)(allv.values())
                for a, v in allv.items():
                    if v > 0 and top > 0:
                        fig["to_best"][a] = v / top if lower else top / v
    return meta, names, [steps[s["name"]] for s in meta["steps"]]


def summary(names, steps):
    """Primary-figure ratios per step and per workload, and their geomeans."""
    per_step = []
    by_workload = {}
    undecided = []
    for s in steps:
        fig = s["figures"].get(s["primary"])
        r = fig["ratio"] if fig else None
        per_step.append((s["name"], r))
        by_workload.setdefault(s["workload"], []).append(r)
        rng = fig["round_range"] if fig else None
        if rng and rng[0] <= 1.0 <= rng[1]:
            undecided.append(s["name"])
    per_workload = [(w, geomean(rs)) for w, rs in by_workload.items()]
    return {
        "steps": per_step,
        "workloads": per_workload,
        "geomean_workloads": geomean([r for _, r in per_workload]),
        "geomean_steps": geomean([r for _, r in per_step]),
        "steps_at_most_1": sum(1 for _, r in per_step if r is not None and r <= 1.0),
        "steps_with_ratio": sum(1 for _, r in per_step if r is not None),
        "undecided": undecided,
    }


# The workloads run at several thread counts (steps NAME-<N>t), the figure
# that adds up the work of all threads, and whether N threads could ideally
# do N times the work of one.  omp-burst cannot: alone, a thread waits at
# no barrier, and from 2 threads on its rounds are bound by the barriers.
SCALING_FIGURES = [("malloc-test", "throughput_Mops", True),
                   ("omp-burst", "Mallocs_per_s", False)]


def step_threads(name):
    """N of a step named WORKLOAD-<N>t, or None."""
    tail = name.rsplit("-", 1)[-1]
    if tail.endswith("t") and tail[:-1].isdigit():
        return int(tail[:-1])
    return None


def scaling(names, steps):
    """Total throughput by thread count, per workload and allocator, for
    the workloads that ran at more than one count (malloc-test at any)."""
    out = {}
    for workload, figure, ideal in SCALING_FIGURES:
        table, unit = {}, None
        for s in steps:
            t = step_threads(s["name"])
            fig = s["figures"].get(figure)
            if s["workload"] != workload or t is None or fig is None:
                continue
            unit = fig["unit"]
            for a, v in fig["value"].items():
                table.setdefault(a, {})[t] = v
        threads = sorted({t for v in table.values() for t in v})
        if table and (workload == "malloc-test" or len(threads) > 1):
            out[workload] = {"figure": figure, "unit": unit,
                             "threads": threads, "ideal": ideal,
                             "by_allocator": {a: table[a] for a in names
                                              if a in table}}
    return out


def cpu_words(meta):
    """ " (MODEL)" when the run recorded the processor, else nothing."""
    model = meta.get("cpu_model", "")
    return f" ({model})" if model and model != "?" else ""


def markdown(meta, names, steps, summ, scal):
    out = []
    w = out.append
    title = "tools/bench: arenalloc against glibc, jemalloc, tcmalloc and mimalloc"
    w(f"# {title}\n")
    w(f"Run {meta.get('date', '?')} on {meta.get('host', '?')}: "
      f"{meta.get('cpus', '?')} CPU(s){cpu_words(meta)}, {meta.get('memory', '?')}, "
      f"{meta.get('kernel', '?')}, {meta.get('libc', '?')}.  ")
    w(f"Load average (1, 5, 15 min): {meta.get('load', '?')}; "
      f"other work on the machine makes the figures noisier.  ")
    w(f"Mode: {meta.get('mode', '?')}, {agg_words(meta)} of {meta.get('reps', '?')} "
      f"interleaved round(s).  Source: {meta.get('source', '?')}.  ")
    w(f"Command: `{meta.get('command', '?')}`\n")
    w("| allocator | library | version |")
    w("|---|---|---|")
    for a in meta["allocators"]:
        w(f"| {a['name']} | {a['library'] or '(none: the C library)'} | {a['version']} |")
    w("")
    w("Every ratio is arranged so that **below 1.00 means arenalloc did "
      "better**: for times and sizes it is arenalloc / best peer, for "
      f"rates best peer / arenalloc.  The best peer is the best of the {agg_words(meta)} among "
      "the other allocators; the best value of each row is in bold.  "
      "*By round* is the lowest and highest of the same ratio taken round "
      "by round (arenalloc against that peer's run in the same round): "
      "when it spans 1.00, the machine's noise was larger than the "
      "difference and this run does not tell which of the two is faster.  "
      "Nothing here is asserted by any test.\n")

    head = ("| step | figure | " + " | ".join(names)
            + " | best peer | ratio | by round |")
    rule = "|---|---|" + "---:|" * len(names) + "---|---:|---:|"

    def row(s, name, fig):
        lower = fig["better"] == "lower"
        med = fig["value"]
        top = (min if lower else max)(med.values()) if med else None
        cells = []
        for a in names:
            if a in med:
                v, _ = shown(med[a], fig["unit"])
                c = fmt(v, whole=fig["unit"] == "calls")
                cells.append(f"**{c}**" if med[a] == top else c)
            elif a in s["failures"]:
                cells.append("fail")
            else:
                cells.append("-")
        _, unit = shown(0, fig["unit"])
        arrow = "lower" if lower else "higher"
        best = fig["best_peer"]["allocator"] if fig["best_peer"] else "-"
        ratio = f"{fig['ratio']:.2f}" if fig["ratio"] is not None else "-"
        rng = fig["round_range"]
        spread = f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-"
        return (f"| {s['name']} | {name} ({unit}, {arrow} is better) | "
                + " | ".join(cells) + f" | {best} | {ratio} | {spread} |")

    w("## Summary: the main figure of each step\n")
    w(head)
    w(rule)
    for s in steps:
        fig = s["figures"].get(s["primary"])
        if fig:
            w(row(s, s["primary"], fig))
        else:
            w(f"| {s['name']} | {s['primary']} | " + " | ".join(
                "fail" if a in s["failures"] else "-" for a in names) + " | - | - | - |")
    w("")
    if summ["steps_with_ratio"]:
        g = summ["geomean_workloads"]
        gs = summ["geomean_steps"]
        w(f"Geometric mean of the ratios over the workloads (each workload the "
          f"geometric mean of its steps): **{g:.2f}** (target: at most 0.9); "
          f"over all {summ['steps_with_ratio']} steps: {gs:.2f}.  "
          f"Steps where arenalloc is at most 1.0 x the best peer: "
          f"{summ['steps_at_most_1']} of {summ['steps_with_ratio']}"
          + (f"; undecided by this run (the by-round range spans 1.00): "
             f"{', '.join(summ['undecided'])}" if summ["undecided"] else "")
          + ".\n")
        w("| workload | ratio |")
        w("|---|---:|")
        for wl, r in summ["workloads"]:
            w(f"| {wl} | {'-' if r is None else f'{r:.2f}'} |")
        w("")

    for workload, sc in scal.items():
        by_alloc, threads = sc["by_allocator"], sc["threads"]
        w(f"## {workload} scaling: {sc['figure']} ({sc['unit']}, all "
          f"threads together) by thread count\n")
        cols = [f"{t} thr" for t in threads]
        extra = []
        if workload == "malloc-test":
            if 1 in threads and 2 in threads:
                extra.append((2, 1))
            if 2 in threads and 8 in threads:
                extra.append((8, 2))
        if sc["ideal"] and len(threads) > 2 and 1 in threads:
            extra.append((threads[-1], 1))
        top = {t: max(v.get(t) or 0 for v in by_alloc.values()) for t in threads}
        w("| allocator | " + " | ".join(cols) + "".join(
            f" | {a}T/{b}T" for a, b in extra) + " |")
        w("|---|" + "---:|" * (len(cols) + len(extra)))
        for a, v in by_alloc.items():
            cells = []
            for t in threads:
                c = fmt(v.get(t))
                cells.append(f"**{c}**" if v.get(t) and v.get(t) == top[t] else c)
            for x, y in extra:
                cells.append(f"{v[x] / v[y]:.2f}" if v.get(x) and v.get(y) else "-")
            w(f"| {a} | " + " | ".join(cells) + " |")
        w("")
        w("The best of each column is in bold.  " + (
          "On 2 CPUs the targets are 2T/1T at least 1.8 and 8T/2T at "
          "least 1.0 (issue 9)." if workload == "malloc-test" else
          "One thread alone waits at no barrier; from 2 threads on the "
          "rounds are bound by the barriers, so the figures show whether "
          "an allocator serializes, not how the work scales: no ratio to "
          "1 thread is given.") + "\n")
    if any(len(sc["threads"]) > 2 for sc in scal.values()):
        w("The chart in the file beside this one whose name ends in "
          "`.scaling.svg` draws these figures against the thread count.\n")

    for ref in meta["references"]:
        rows = [s for s in steps
                if ref in s["figures"].get(s["primary"], {}).get("reference", {})]
        if not rows:
            continue
        w(f"## {rows[0]['workload']} against the harness floor ({ref})\n")
        w(f"The {ref} row runs the same program under tools/bench/floor_alloc.c, "
          "whose malloc and free do next to nothing (a per-thread stack of "
          "blocks, no lock, no atomic), interleaved with the allocators in "
          "every round: it measures the loop around the allocator, which no "
          "allocator can make faster.  Each cell is the allocator's main "
          "figure as a share of the floor's (1.00: as fast as the floor); "
          "*by round* is arenalloc's share taken round by round.\n")
        w(f"| step | {ref} | " + " | ".join(names) + " | by round |")
        w("|---|---:|" + "---:|" * len(names) + "---:|")
        for s in rows:
            fig = s["figures"][s["primary"]]
            sh = fig["share_of_reference"][ref]
            v, unit = shown(fig["reference"][ref], fig["unit"])
            cells = [f"{sh['shares'][a]:.3f}" if a in sh["shares"] else "-"
                     for a in names]
            rng = sh["subject_rounds"]
            w(f"| {s['name']} | {fmt(v)} {unit} | " + " | ".join(cells)
              + f" | {f'{rng[0]:.3f}-{rng[1]:.3f}' if rng else '-'} |")
        w("")

    if meta["variants"]:
        w("## --tuned variants against the defaults, round by round\n")
        w("For each step's main figure: the median, over the rounds, of the "
          "variant's figure against arenalloc's in the same round (below "
          "1.00 means the options did better), and the lowest and highest "
          "of those ratios.\n")
        w("| step | " + " | ".join(meta["variants"]) + " |")
        w("|---|" + "---:|" * len(meta["variants"]))
        for s in steps:
            fig = s["figures"].get(s["primary"])
            if not fig:
                continue
            cells = []
            for var in meta["variants"]:
                vr = fig["variant_ratios"].get(var)
                cells.append("-" if vr is None else
                             f"{vr['median']:.2f} ({vr['range'][0]:.2f}-"
                             f"{vr['range'][1]:.2f})")
            w(f"| {s['name']} | " + " | ".join(cells) + " |")
        w("")

    ser = [(s, s["series"]["rss_after_scan_KiB"]) for s in steps
           if "rss_after_scan_KiB" in s["series"]]
    for s, by_alloc in ser:
        w(f"## {s['name']}: resident size after each scan (MiB)\n")
        w("Scan by scan, in the order they finished; each value the median "
          "over the rounds.\n")
        w("| allocator | RSS after scan 1, 2, ... |")
        w("|---|---|")
        for a in names:
            runs = [r["values"] for r in by_alloc.get(a, [])]
            if not runs:
                continue
            n = min(len(v) for v in runs)
            meds = [statistics.median(v[i] for v in runs) / 1024 for i in range(n)]
            w(f"| {a} | " + " ".join(f"{m:.0f}" for m in meds) + " |")
        w("")

    w("## Every figure\n")
    w(head)
    w(rule)
    for s in steps:
        for name, fig in s["figures"].items():
            w(row(s, name, fig))
    w("")
    w("peak_rss_KiB is /usr/bin/time's maximum resident set size of the "
      "process (its ratio is to the smallest peer).  The other RSS figures are "
      "read by the program from /proc/self/statm.  The JSON file has every "
      "round's value of every figure.\n")

    failed = [(s["name"], a, f) for s in steps for a, fs in s["failures"].items()
              for f in fs]
    if failed or meta["notes"]:
        w("## Notes\n")
        for n in meta["notes"]:
            w(f"- {n}")
        for step, a, f in failed:
            w(f"- {step}, {a}, round {f['round']}: failed ({f['reason']})")
        w("")

    w("## Steps\n")
    w("| step | command (LD_PRELOAD set for all but glibc) |")
    w("|---|---|")
    for s in steps:
        w(f"| {s['name']} | `{s['command']}` |")
    w("")
    return "\n".join(out)


def svg_head(width, height, left, names, title, subtitle):
    """The start of a chart: white page, title, subtitle and a legend of
    the allocators' colours from x = LEFT."""
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
         f'height="{height}" viewBox="0 0 {width} {height}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{width / 2}" y="20" text-anchor="middle" '
         f'font-size="14" font-weight="bold">{escape(title)}</text>',
         f'<text x="{width / 2}" y="37" text-anchor="middle" fill="#444">'
         f'{escape(subtitle)}</text>']
    lx = left
    for i, a in enumerate(names):
        o.append(f'<rect x="{lx}" y="46" width="10" height="10" '
                 f'fill="{COLOURS[i % len(COLOURS)]}"/>')
        o.append(f'<text x="{lx + 14}" y="55">{escape(a)}</text>')
        lx += 20 + 7 * len(a) + 14
    return o


def svg_chart(meta, names, steps):
    """One group of bars per step: each allocator's main figure as a ratio
    to the best allocator of that step, as a time (shorter is better)."""
    cap = 4.0
    left, right, top = 150, 70, 70
    bar_h, gap = 11, 12
    plot_w = 620
    groups = [s for s in steps if s["figures"].get(s["primary"])]
    height = top + len(groups) * (len(names) * bar_h + gap) + 50
    width = left + plot_w + right

    def x_of(r):
        return left + plot_w * min(r, cap) / cap

    o = svg_head(width, height, left, names,
                 "tools/bench: time relative to the best allocator of each "
                 "step (shorter is better)",
                 f'{meta.get("date", "")}, {meta.get("cpus", "?")} CPU(s), '
                 f'{meta.get("mode", "")}, {agg_words(meta)} of '
                 f'{meta.get("reps", "?")} rounds; rates shown as best / '
                 f'value; bars cut at {cap:g}x')
    # Grid.
    bottom = height - 40
    r = 0.0
    while r <= cap + 1e-9:
        x = x_of(r)
        colour = "#000" if r == 1.0 else "#ddd"
        o.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" '
                 f'y2="{bottom}" stroke="{colour}"/>')
        o.append(f'<text x="{x:.1f}" y="{bottom + 14}" '
                 f'text-anchor="middle">{r:g}x</text>')
        r += 0.5
    y = top
    for s in groups:
        fig = s["figures"][s["primary"]]
        gh = len(names) * bar_h
        o.append(f'<text x="{left - 8}" y="{y + gh / 2 + 4:.1f}" '
                 f'text-anchor="end" font-weight="bold">'
                 f'{escape(s["name"])}</text>')
        for i, a in enumerate(names):
            by = y + i * bar_h
            if a not in fig["to_best"]:
                o.append(f'<text x="{left + 4}" y="{by + bar_h - 2}" '
                         f'fill="#888">{escape(a)}: no result</text>')
                continue
            rr = fig["to_best"][a]
            x1 = x_of(rr)
            o.append(f'<rect x="{left}" y="{by + 1}" width="{x1 - left:.1f}" '
                     f'height="{bar_h - 2}" fill="{COLOURS[i % len(COLOURS)]}">'
                     f'<title>{escape(a)}: {fmt(fig["value"][a])} '
                     f'{escape(fig["unit"])}</title></rect>')
            label = f"{rr:.2f}" + ("+" if rr > cap else "")
            o.append(f'<text x="{x1 + 3:.1f}" y="{by + bar_h - 2}">'
                     f'{label}</text>')
        y += gh + gap
    o.append(f'<text x="{left}" y="{height - 8}" fill="#444">Each step\'s main '
             f'figure (see RESULTS.md); 1x is the best allocator of the step.'
             f'</text>')
    o.append('</svg>')
    return "\n".join(o) + "\n"


def svg_scaling(meta, names, scal):
    """One panel per workload of scal with three or more thread counts:
    each allocator's total throughput against the thread count and, where
    N threads could do N times the work of one (malloc-test), the line of
    arenalloc's one-thread figure times the count."""
    panels = [(w, sc) for w, sc in scal.items() if len(sc["threads"]) > 2]
    if not panels:
        return None
    ideal = [w for w, sc in panels
             if sc["ideal"] and sc["by_allocator"].get(SUBJECT, {}).get(1)]
    pw, ph = 420, 300
    left, top, gap = 70, 80, 90
    width = left + len(panels) * (pw + gap)
    height = top + ph + 60
    o = svg_head(width, height, left, names,
                 "tools/bench: total throughput by thread count (higher "
                 "is better)",
                 f'{meta.get("date", "")}, {meta.get("cpus", "?")} CPU(s), '
                 f'{agg_words(meta)} of {meta.get("reps", "?")} rounds'
                 + (f"; dashed ({', '.join(ideal)}): arenalloc's 1-thread "
                    f"figure times the thread count" if ideal else ""))
    for k, (workload, sc) in enumerate(panels):
        by_alloc, threads = sc["by_allocator"], sc["threads"]
        x0 = left + k * (pw + gap)
        y0 = top + ph
        tmax = threads[-1]
        vmax = max(v for vs in by_alloc.values() for v in vs.values())
        base = by_alloc.get(SUBJECT, {}).get(1)

        def px(t):
            return x0 + pw * t / tmax

        def py(v):
            return y0 - ph * min(v, vmax * 1.05) / (vmax * 1.05)

        o.append(f'<text x="{x0 + pw / 2}" y="{top - 8}" text-anchor="middle" '
                 f'font-weight="bold">{escape(workload)}: '
                 f'{escape(sc["figure"])} ({escape(sc["unit"] or "")})</text>')
        o.append(f'<rect x="{x0}" y="{top}" width="{pw}" height="{ph}" '
                 f'fill="none" stroke="#888"/>')
        for t in threads:
            o.append(f'<line x1="{px(t):.1f}" y1="{y0}" x2="{px(t):.1f}" '
                     f'y2="{top}" stroke="#eee"/>')
            o.append(f'<text x="{px(t):.1f}" y="{y0 + 14}" '
                     f'text-anchor="middle">{t}</text>')
        for j in range(5):
            v = vmax * 1.05 * j / 4
            o.append(f'<text x="{x0 - 4}" y="{py(v) + 4:.1f}" '
                     f'text-anchor="end">{fmt(v)}</text>')
        o.append(f'<text x="{x0 + pw / 2}" y="{y0 + 30}" '
                 f'text-anchor="middle">threads</text>')
        if workload in ideal:
            # Cut where it leaves the panel, keeping its slope.
            tend = min(tmax, vmax * 1.05 / base)
            o.append(f'<line x1="{px(0):.1f}" y1="{py(0):.1f}" '
                     f'x2="{px(tend):.1f}" y2="{py(base * tend):.1f}" '
                     f'stroke="#d62728" stroke-dasharray="4 3" '
                     f'stroke-opacity="0.5"/>')
        for i, a in enumerate(names):
            v = by_alloc.get(a)
            if not v:
                continue
            pts = " ".join(f"{px(t):.1f},{py(v[t]):.1f}" for t in threads if t in v)
            colour = COLOURS[i % len(COLOURS)]
            o.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                     f'stroke-width="{2.5 if a == SUBJECT else 1.5}"/>')
            for t in threads:
                if t in v:
                    o.append(f'<circle cx="{px(t):.1f}" cy="{py(v[t]):.1f}" '
                             f'r="2.5" fill="{colour}"><title>{escape(a)}, '
                             f'{t} thread(s): {fmt(v[t])}</title></circle>')
    o.append('</svg>')
    return "\n".join(o) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: report.py META.tsv RAW.tsv OUTSTEM")
    meta, names, steps = load(sys.argv[1], sys.argv[2])
    summ = summary(names, steps)
    scal = scaling(names, steps)
    stem = sys.argv[3]
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(meta, names, steps, summ, scal))
    with open(stem + ".svg", "w", encoding="utf-8") as f:
        f.write(svg_chart(meta, names, steps))
    curve = svg_scaling(meta, names, scal)
    if curve:
        with open(stem + ".scaling.svg", "w", encoding="utf-8") as f:
            f.write(curve)
    doc = {
        "meta": {k: v for k, v in meta.items() if k != "steps"},
        "ratio_rule": "below 1.0 means arenalloc better: lower-is-better "
                      "figures arenalloc/best peer, higher-is-better best "
                      "peer/arenalloc",
        "steps": steps,
        "summary": {
            "per_step": dict(summ["steps"]),
            "per_workload": dict(summ["workloads"]),
            "geomean_workloads": summ["geomean_workloads"],
            "geomean_steps": summ["geomean_steps"],
            "steps_at_most_1": summ["steps_at_most_1"],
            "steps_with_ratio": summ["steps_with_ratio"],
            "undecided": summ["undecided"],
        },
        # Kept under its old name for scripts that read it.
        "malloc_test_scaling": scal.get("malloc-test", {}).get("by_allocator", {}),
        "scaling": scal,
    }
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
