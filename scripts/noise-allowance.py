#!/usr/bin/env python3
"""How far could the always-on point come down in noise? Measures a noise allowance on the rejection sets.

Heed does not ship one: chosen here on the sets' clips, it let the listener act on other talk far
more often in noise (docs/MEASUREMENTS.md, "A lower always-on point in noise").

usage: scripts/noise-allowance.py SETS_DIR RESULTS_DIR [RESULTS_DIR ...] [--point 0.87] [--allowance KNEE,SLOPE,FLOOR]

Each RESULTS_DIR is one condition of the rejection sets, decoded by scripts/rejection-eval.py
(e.g. clean and with kitchen noise mixed in: `-- --jobs 2 --without-contextual --denoise off
[--noise FILE --snr DB]`). An allowance lowers the threshold of a result whose `noiseLevel`
feature is past the knee: threshold = max(floor, point - slope * (noiseLevel - knee)). Every
allowance of a small grid is tried on the train split; those that keep at most one false accept
in every condition's train split are ranked by heard-right commands accepted over all conditions.
Prints the best few, then the fixed point and the best allowance (or the one given with
--allowance, e.g. 0.5,0.5,0.7) per condition and split: heard-right commands accepted / heard
right, and false accepts of other speech.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("rejection_eval", os.path.join(HERE, "rejection-eval.py"))
rejection = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rejection)


def threshold(point, noise_level, knee, slope, floor):
    return max(floor, point - slope * max(0.0, noise_level - knee))


def count(items, rule, split, point):
    """(heard-right commands accepted, heard right, false accepts) of a split when each result must
    reach rule(its noise level): rejection-eval's curve at `point`, with each score moved by as much
    as its threshold is."""
    part = [i for i in items if split == "all" or i["split"] == split]
    shifted = lambda i: i["confidence"] - rule(i["features"].get("noiseLevel", 0.0)) + point
    _, right, _, _, false_accepts, _, _, heard_right = rejection.curve(part, shifted, [point])[0]
    return right, heard_right, false_accepts


def main():
    args = sys.argv[1:]
    point, given = 0.87, None
    if "--allowance" in args:
        index = args.index("--allowance")
        given = tuple(float(value) for value in args[index + 1].split(","))
        del args[index:index + 2]
    if "--point" in args:
        index = args.index("--point")
        point = float(args[index + 1])
        del args[index:index + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    sets_dir, results = args[0], args[1:]
    conditions = {}
    for results_dir in results:
        items = [i for i in rejection.outcomes(sets_dir, results_dir) if i["speech"] == "real"]
        conditions[os.path.basename(os.path.normpath(results_dir))] = items
    grid = [(knee, slope, floor) for knee in (0.25, 0.5, 0.75, 1.0) for slope in (0.1, 0.2, 0.3, 0.5)
            for floor in (0.5, 0.6, 0.7, 0.8)]
    ranked = []
    for knee, slope, floor in grid:
        rule = lambda n, a=(knee, slope, floor): threshold(point, n, *a)
        train = [count(items, rule, "train", point) for items in conditions.values()]
        if all(false_accepts <= 1 for _, _, false_accepts in train):
            ranked.append((sum(accepted for accepted, _, _ in train), (knee, slope, floor)))
    ranked.sort(key=lambda entry: (-entry[0], entry[1]))
    print("allowances keeping <= 1 false accept in every train split, by train acceptance (knee, slope, floor):")
    for accepted, allowance in ranked[:5]:
        print(f"  {accepted}  {allowance}")
    rules = [(f"fixed {point}", lambda n: point)]
    chosen = given or (ranked[0][1] if ranked else None)
    if chosen:
        rules.append((f"allowance {chosen}", lambda n, a=chosen: threshold(point, n, *a)))
    for label, rule in rules:
        print(label)
        for name, items in conditions.items():
            cells = "  ".join("%s %d/%d, %d FA" % ((split,) + count(items, rule, split, point)) for split in ("train", "test", "all"))
            print(f"  {name:12} {cells}")


if __name__ == "__main__":
    main()
