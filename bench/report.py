#!/usr/bin/env python3
"""make bench's report: the series' costs against the unpatched kernel.

usage: report.py RUNS P_RELEASE U_RELEASE

RUNS holds what bench.sh collected: each boot's kms_cost output (TAP) in
<kernel><boot>/cost, kernel P or U, boot 1, 2, ..., and the two instruction
counting boots in iP/cost and iU/cost (QEMU -icount, one virtual nanosecond
per instruction: their "seconds" are instructions / 1e9), and
"boots.seconds". kms_cost's records are the JSON object in the YAML block
of its test "figures-recorded": the fine clock's rate (the TSC, ticks per
second of the boot's own clock) and [figure, setting, round, seconds].
Prints the report (Markdown) on stdout.
"""
import datetime
import json
import os
import pathlib
import statistics
import sys

# emulation, figure, numerator (kernel figure setting), denominator, target.
# The unpatched kernel has neither the cap nor the emulation: its no-cap
# figure is the reference of both, its only composition the reference of
# both settings.
ROWS = [
    ("off", "TEST_ONLY commit, no cap", "P test_nocap off", "U test_nocap -", 1.02),
    ("off", "TEST_ONLY commit, cap set (unpatched: no cap)", "P test_cap off", "U test_nocap -",
     1.02),
    ("off", "legacy cursor move, no cap", "P move off", "U move -", 1.02),
    ("off", "composition 1920x1080, unscaled", "P compose off", "U compose -", 1.02),
    ("on", "TEST_ONLY commit, no cap", "P test_nocap on", "U test_nocap -", 1.20),
    ("on", "TEST_ONLY commit, cap set (unpatched: no cap)", "P test_cap on", "U test_nocap -",
     1.20),
    ("on", "legacy cursor move, no cap", "P move on", "U move -", 1.20),
    ("on", "composition 1920x1080, unscaled", "P compose on", "U compose -", 1.10),
    ("on vs off", "composition 1920x1080, 2x upscaled overlay under the cursor (patched only)",
     "P scaled on", "P scaled off", 1.10),
]


def read_boot(path):
    """(tick_hz, [(figure, setting, seconds)]) of one boot's kms_cost TAP.

    The YAML block under "ok N - figures-recorded" holds one line of JSON;
    a boot whose figures failed has no such test and is refused.
    """
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        sys.exit(f"report.py: {path}: {e.strerror}")
    for i, line in enumerate(lines):
        if line.startswith("ok ") and line.endswith(" - figures-recorded"):
            if lines[i + 1:i + 2] != ["  ---"] or lines[i + 3:i + 4] != ["  ..."]:
                break
            try:
                data = json.loads(lines[i + 2])
                return (float(data["tick_hz"]),
                        [(f, s, float(sec)) for f, s, _round, sec in data["records"]])
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"report.py: {path}: unreadable records: {e}")
    sys.exit(f"report.py: {path}: no figures-recorded test with its records")


def read_records(runs):
    """{(kernel, figure, setting): {boot: [seconds]}} in the reference clock,
    and {(kernel, boot): tick_hz}.

    Each boot measured its TSC's rate (the host's, under TCG) against its own
    clock, which loses jiffies when QEMU's vCPUs are starved: the lowest rate
    is the least distorted, and every boot's seconds are converted to it.
    """
    boots = {}
    if not runs.is_dir():
        sys.exit(f"report.py: {runs}: not a directory")
    for d in sorted(runs.iterdir()):
        if d.is_dir() and d.name[0] in "PU" and d.name[1:].isdigit():
            boots[(d.name[0], int(d.name[1:]))] = read_boot(d / "cost")
    if not boots:
        sys.exit(f"report.py: {runs}: no boot's figures (P1, U1, ...)")
    clocks = {kb: hz for kb, (hz, _) in boots.items()}
    ref = min(clocks.values())
    recs = {}
    for (k, b), (hz, records) in boots.items():
        for fig, setting, sec in records:
            recs.setdefault((k, fig, setting), {}).setdefault(b, []).append(sec * hz / ref)
    return recs, clocks


def series(spec):
    k, fig, setting = spec.split()
    return k, fig, setting


def show(x, fig):
    return f"{1e3 * x:.1f} ms" if fig in ("compose", "scaled") else f"{1e6 * x:.1f} us"


def verdict(ratio, target, noise):
    """PASS within the target; a miss by less than the noise floor says so."""
    if ratio <= target:
        return "PASS"
    return "MISS (in noise)" if ratio <= target * noise else "MISS"


def noise_floor(boots, stat):
    """Ratios of the reference's per-boot figures over every pair of its boots."""
    vals = [stat(boots[b]) for b in sorted(boots)]
    ratios = sorted(vals[j] / vals[i] for i in range(len(vals)) for j in range(i + 1, len(vals)))
    worst = max([1.0] + [max(r, 1 / r) for r in ratios])
    return ratios, worst


def timed_row(recs, emulation, label, num, den, target):
    n, d = recs.get(series(num)), recs.get(series(den))
    if not n or not d:
        return f"| {emulation} | {label} | no figures | | | | | | {target} | |"
    fig = series(num)[1]
    n_all = [x for b in n.values() for x in b]
    d_all = [x for b in d.values() for x in b]
    med_n, med_d = statistics.median(n_all), statistics.median(d_all)
    ratio, ratio_min = med_n / med_d, min(n_all) / min(d_all)
    pairs = sorted(statistics.median(n[b]) / statistics.median(d[b]) for b in n if b in d)
    if not pairs:
        return f"| {emulation} | {label} | no boot with both figures | | | | | | {target} | |"
    fl, noise = noise_floor(d, statistics.median)
    fm, noise_min = noise_floor(d, min)
    k, _, setting = series(den)
    ref = k + ("" if setting == "-" else f" {setting}")
    floor = f"{fl[0]:.3f} - {fl[-1]:.3f}; {fm[0]:.3f} - {fm[-1]:.3f}" if fl else "-"
    return (f"| {emulation} | {label} | {show(med_n, fig)} ({show(min(n_all), fig)}) | "
            f"{ref}: {show(med_d, fig)} ({show(min(d_all), fig)}) | **{ratio:.3f}** | "
            f"**{ratio_min:.3f}** | {pairs[0]:.3f} / {statistics.median(pairs):.3f} / "
            f"{pairs[-1]:.3f} | {floor} | <= {target} | {verdict(ratio, target, noise)} / "
            f"{verdict(ratio_min, target, noise_min)} |")


def read_icount(path):
    """{(figure, setting): [instructions]} of one -icount boot."""
    counts = {}
    if not path.exists():
        return counts
    for fig, setting, sec in read_boot(path)[1]:
        counts.setdefault((fig, setting), []).append(sec * 1e9)
    return counts


def icount_row(ip, iu, emulation, label, num, den, target):
    kn, fn, sn = series(num)
    kd, fd, sd = series(den)
    n = (ip if kn == "P" else iu).get((fn, sn))
    d = (ip if kd == "P" else iu).get((fd, sd))
    if not n or not d:
        return f"| {emulation} | {label} | no figures | | | {target} | |"
    ratio = statistics.median(n) / statistics.median(d)
    return (f"| {emulation} | {label} | {statistics.median(n):,.0f} | {statistics.median(d):,.0f} | "
            f"**{ratio:.4f}** | <= {target} | {'PASS' if ratio <= target else 'MISS'} |")


def main():
    runs, p_rel, u_rel = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    recs, clocks = read_records(runs)
    pairs = max(b for _, b in clocks)
    ref = min(clocks.values())
    drift = max(100 * (hz / ref - 1) for hz in clocks.values())
    cost = (runs / "P1" / "cost").read_text().splitlines()
    cursor = next((line[len("# cursor figures: "):] for line in cost
                   if line.startswith("# cursor figures: ")), "?")
    compose = next((line[len("# composition: "):] for line in cost
                    if line.startswith("# composition: ")), "?")
    boots_s = (runs / "boots.seconds").read_text().strip()

    out = ["# make bench: the series against the unpatched kernel", ""]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out.append(f"{now}, {os.cpu_count()} host cores. "
               f"{pairs} boots of each kernel under QEMU TCG, alternating (P = patched {p_rel}, "
               f"U = unpatched {u_rel}, same configuration), {boots_s} s of boots.")
    out.append(f"Guest clocks slower than the host's by up to {drift:.1f} % (lost jiffies under "
               "load; corrected per boot, see report.py).")
    out.append(f"Per boot: {cursor}; composition: {compose}.")
    out.append("")
    out.append("## Instructions (QEMU -icount, one boot of each kernel)")
    out.append("")
    out.append("| emulation | figure | patched: instructions (median) | unpatched | ratio | "
               "target | |")
    out.append("|---|---|---|---|---|---|---|")
    ip, iu = read_icount(runs / "iP" / "cost"), read_icount(runs / "iU" / "cost")
    out += [icount_row(ip, iu, *row) for row in ROWS]
    out.append("")
    out.append("Instructions per call (cursor figures) or per frame (composition), user and "
               "kernel, counted by QEMU's -icount on a single vCPU (one boot each; repeat "
               "boots agreed to 0.5 % or better, most figures to a few in 100,000), "
               "whatever the host does. What the code "
               "costs; not the cache, branch or TCG translation effects a real CPU or the "
               "timed boots see. With sleep=off the clock jumps over idle time to the next "
               "timer: a frame that waited in between (it spans vblank to fence) would count "
               "that wait too; the frames here do not vary by more than the batches do.")
    out.append("")
    out.append("## Time (TCG, alternating boots)")
    out.append("")
    out.append("| emulation | figure | patched: median (min) | reference | ratio of medians | "
               "ratio of minima | per pair: min / median / max | noise floor: medians; minima | "
               "target | medians / minima |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    out += [timed_row(recs, *row) for row in ROWS]
    out.append("")
    out.append("""Cursor figures in microseconds per call, composition in milliseconds per
frame (from the vblank that starts it to the writeback fence). "medians",
"minima": the ratio of the median (minimum) of all batches of all boots.
"per pair": ratio of the boot medians of P_i and U_i (P_i on and off for
the last row), min / median / max over the pairs. "noise floor": the
reference against itself, ratios of its boot medians (minima) over every pair
of its boots, min - max. PASS or MISS, for the ratio of medians and for that of
minima: the ratio is within the target, or not; "in noise": it misses the
target by less than the reference's largest difference from itself, which is
no evidence of a cost. Under a busy host, frames and batches only get slower:
the minima are then the steadier figure. Timed figures also move with where
the code lands in memory: a copy of the unpatched vkms.ko with its code
shifted by a few hundred bytes, the same instructions, timed 0.94 to 1.01 of
the original (docs/6.1.md); the instruction counts do not move.""")
    print("\n".join(out))


if __name__ == "__main__":
    main()
