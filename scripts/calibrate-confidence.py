#!/usr/bin/env python3
"""Fits Heed's confidence model: P(command heard right | confidence features).

usage: scripts/calibrate-confidence.py SETS_DIR [RESULTS_DIR ...] [--features a,b,...] [--model NAME]
                                      [--outside-limit R|none] [--grammars G,G,...] [--synthetic]

Reads the `heed eval --json` results that scripts/rejection-eval.py wrote for the sets of
scripts/rejection-sets.py (default RESULTS_DIR: SETS_DIR/results). Several RESULTS_DIRs are
several conditions of the same sets (clean, and noise mixed in at some SNR with
`rejection-eval.py … -- --noise FILE --snr DB`): all are fitted on together, the threshold must
keep ≤ 1 false accept per hour in each, and the curves are printed per condition. Every result of real
speech with words is an example: 1 when it is a positive heard right, 0 when it is a
negative or a positive heard wrong. A logistic regression over the named features
(default: the six of ConfidenceModel.features; `--features all` for every one that
`heed eval` reports) is fitted by Newton's method, with a small L2
penalty on standardised features, on the `train` split only. Negatives are weighted so
that both classes weigh the same.

Prints the weights as Swift for ConfidenceModel, the rejection curve (acceptance of
positives, false accepts per hour of negatives) on the train split, on the held-out
test split and on all, for the fitted model and for a reference model (--model: `clean`,
the six-feature model fitted on clean speech alone, the default; `phoneLoop`, the
margin-only model of the first version), and the threshold with the
best acceptance at ≤ 1 false accept per hour on train. Both models score 0 where the phone loop
found more than R phones outside the words for each phone of them (--outside-limit, default 6,
Heed's ConfidenceModel.outsidePhoneLimit; `none` scores every result by its features alone).
--grammars keeps the sets decoded with these grammars only (`intents`, or a JSGF file as the sets
name it): `--grammars grammars/speech-commands.gram,grammars/digit.gram --features
allFramesMargin,meanMargin,logOutsidePhones --model oneWord` fits ConfidenceModel.oneWord on results
decoded with every senone, as Heed decodes a grammar of single words.
--synthetic fits on the synthetic speech of the train split too (the sets' espeak-ng and flite
voices); the threshold is still chosen on real speech, the curves are real speech, and the
synthetic speech is reported on its own: its heard-right commands accepted at each model's
threshold, train and test voices apart.
"""
import importlib.util
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("rejection_eval", os.path.join(HERE, "rejection-eval.py"))
rejection = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rejection)

REFERENCE = {
    "phoneLoop": ({"meanMargin": 0.1731}, -0.092),
    # The six-feature model fitted on clean speech alone (ConfidenceModel.features until 2026-11-25).
    "clean": ({"meanMargin": 0.2538, "allFramesMargin": 0.1523, "lowMarginFraction": -5.129, "logPhoneRatio": 0.9685,
               "logOutsidePhones": -0.4281, "logWordCount": 1.289}, 1.169),
    "oneWord": ({"allFramesMargin": 0.1006, "meanMargin": 0.0808, "logOutsidePhones": -0.406}, 3.38),
}
# Chosen over all ten features and four other subsets by acceptance at ≤ 1 FA/hour on train.
DEFAULT_FEATURES = ["meanMargin", "allFramesMargin", "lowMarginFraction", "logPhoneRatio", "logOutsidePhones", "logWordCount"]
FINE = [round(0.01 * step, 2) for step in range(1, 100)]


def sigmoid(z):
    return 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))


def solve(matrix, vector):
    """Gaussian elimination with partial pivoting."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[col][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] if a[i][i] else 0.0 for i in range(n)]


def fit(examples, names, penalty=1.0):
    """Weighted L2-penalised logistic regression; returns raw-feature weights and intercept."""
    xs = [[e["features"].get(name, 0.0) for name in names] for e in examples]
    ys = [1.0 if e["label"] else 0.0 for e in examples]
    positives = sum(ys)
    negatives = len(ys) - positives
    ws = [len(ys) / (2 * positives) if y else len(ys) / (2 * negatives) for y in ys]
    means = [sum(x[j] for x in xs) / len(xs) for j in range(len(names))]
    scales = [math.sqrt(sum((x[j] - means[j]) ** 2 for x in xs) / len(xs)) or 1.0 for j in range(len(names))]
    zs = [[1.0] + [(x[j] - means[j]) / scales[j] for j in range(len(names))] for x in xs]
    beta = [0.0] * (len(names) + 1)
    for _ in range(100):
        grad = [0.0] * len(beta)
        hess = [[0.0] * len(beta) for _ in beta]
        for z, y, w in zip(zs, ys, ws):
            p = sigmoid(sum(b * v for b, v in zip(beta, z)))
            for i in range(len(beta)):
                grad[i] += w * (y - p) * z[i]
                for j in range(len(beta)):
                    hess[i][j] += w * p * (1 - p) * z[i] * z[j]
        for i in range(1, len(beta)):
            grad[i] -= penalty * beta[i]
            hess[i][i] += penalty
        step = solve(hess, grad)
        beta = [b + s for b, s in zip(beta, step)]
        if max(abs(s) for s in step) < 1e-9:
            break
    weights = {name: beta[j + 1] / scales[j] for j, name in enumerate(names)}
    intercept = beta[0] - sum(beta[j + 1] * means[j] / scales[j] for j in range(len(names)))
    return weights, intercept


def scorer(weights, intercept, outside_limit=6.0):
    """The model's probability, 0 above its limit on phones outside the words per phone of them
    (ConfidenceModel.outsidePhoneLimit; None: no limit)."""
    def score(item):
        if outside_limit is not None and item["features"].get("outsidePhoneRatio", 0.0) > outside_limit:
            return 0.0
        return sigmoid(intercept + sum(w * item["features"].get(name, 0.0) for name, w in weights.items()))
    return score


def main():
    args = sys.argv[1:]
    names = DEFAULT_FEATURES
    reference = "clean"
    if "--features" in args:
        index = args.index("--features")
        names = args[index + 1].split(",")
        del args[index:index + 2]
    if "--model" in args:
        index = args.index("--model")
        reference = args[index + 1]
        del args[index:index + 2]
    outside_limit = 6.0
    if "--outside-limit" in args:
        index = args.index("--outside-limit")
        outside_limit = None if args[index + 1] == "none" else float(args[index + 1])
        del args[index:index + 2]
    grammars = None
    if "--grammars" in args:
        index = args.index("--grammars")
        grammars = set(args[index + 1].split(","))
        del args[index:index + 2]
    with_synthetic = "--synthetic" in args
    if with_synthetic:
        args.remove("--synthetic")
    if not args:
        sys.exit(__doc__)
    sets_dir = os.path.abspath(args[0])
    results_dirs = [os.path.abspath(a) for a in args[1:]] or [os.path.join(sets_dir, "results")]
    keep = lambda entry: grammars is None or rejection.grammar_group(entry) in grammars
    items, synthetic = [], []
    for results_dir in results_dirs:
        condition = os.path.basename(results_dir)
        for item in rejection.outcomes(sets_dir, results_dir, keep):
            (items if item["speech"] == "real" else synthetic).append(dict(item, condition=condition))
    rejection.durations(items)
    for item in items + synthetic:
        item["label"] = item["role"] == "positive" and item["right"]
    heard = [item for item in items if item["text"]]
    train = [item for item in heard if item["split"] == "train"]
    if with_synthetic:
        spoken = [item for item in synthetic if item["text"] and item["split"] == "train"]
        train += spoken
        print(f"with {len(spoken)} synthetic train results ({sum(1 for e in spoken if e['label'])} right commands)")
    if names == ["all"]:
        names = sorted({name for item in heard for name in item["features"]})
    weights, intercept = fit(train, names)
    print(f"fitted on {len(train)} train results ({sum(1 for e in train if e['label'])} right commands) over {', '.join(names)}")
    print("    public static let … = ConfidenceModel(")
    print("        weights: [" + ", ".join(f'"{name}": {weights[name]:.4g}' for name in names) + "],")
    print(f"        intercept: {intercept:.4g}")
    print("    )")

    fitted = scorer(weights, intercept, outside_limit)
    base_weights, base_intercept = REFERENCE[reference]
    base = scorer(base_weights, base_intercept, outside_limit)
    chosen = {}
    for label, score in ((reference, base), ("fitted", fitted)):
        choice = rejection.best_threshold([i for i in items if i["split"] == "train"], score)
        chosen[label] = (score, choice)
        print(f"\n== {label}: best threshold on train at ≤ 1 FA/hour in every condition: {choice[0] if choice else 'none'}")
        for condition in sorted({i["condition"] for i in items}):
            mine = [i for i in items if i["condition"] == condition]
            for split in ("train", "test", "all"):
                part = mine if split == "all" else [i for i in mine if i["split"] == split]
                title = f"{label}, {condition}, {split}"
                rejection.print_curve(f"{title}: {rejection.summary(part)}", rejection.curve(part, score))
                if choice:
                    rejection.print_curve(f"{title} at the chosen threshold", rejection.curve(part, score, [choice[0]]))

    print("\nsummary at each model's chosen threshold (acceptance of heard-right positives; false accepts per hour):")
    print(f"{'condition':12} {'split':6} " + " ".join(f"{label + ' @' + (format(c[0], '.2f') if c else '-'):>30}" for label, (_, c) in chosen.items()))
    for condition in sorted({i["condition"] for i in items}):
        for split in ("train", "test"):
            part = [i for i in items if i["condition"] == condition and i["split"] == split]
            cells = []
            for label, (score, choice) in chosen.items():
                if not choice:
                    cells.append(f"{'-':>30}")
                    continue
                _, right, _, npos, fa, _, hours, ceiling = rejection.curve(part, score, [choice[0]])[0]
                of_right = f"{100 * right / ceiling:.1f}%" if ceiling else "n/a"
                per_hour = f"{fa / hours:.1f}/h" if hours else "n/a"
                cells.append(f"{f'{right}/{ceiling} {of_right}, {fa} FA {per_hour}':>30}")
            print(f"{condition:12} {split:6} " + " ".join(cells))
    if synthetic:
        print("\nsynthetic speech at each model's chosen threshold (heard-right commands accepted):")
        for split in ("train", "test"):
            right = [i for i in synthetic if i["split"] == split and i["label"]]
            cells = [f"{label}: {sum(1 for i in right if c and score(i) >= c[0])}/{len(right)}" for label, (score, c) in chosen.items()]
            print(f"  {split:6} " + ", ".join(cells))


if __name__ == "__main__":
    main()
