"""How long are two-phase solutions of random states, next to the shortest possible?

Solves a sample of uniformly random states (random state indexes) at target 20 with
cubefleet, loads the results into pandas, and plots their length distribution beside the
published distribution of optimal lengths over all 43,252,003,274,489,856,000 states
(Rokicki, Kociemba, Davidson and Dethridge, 2010; cube20.org). Saves the PNG: by default the
README's picture, docs/length-distribution.png, which this script keeps current.

    pip install "./python[pandas]" matplotlib
    python examples/python/length_distribution.py --count 10000
"""

from __future__ import annotations

import argparse
import pathlib
import random
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import cubefleet  # noqa: E402

#: the README's picture of the distribution (the default output)
README_PICTURE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "length-distribution.png"

#: positions at each optimal distance, out of all states (cube20.org; 16 to 20 are estimates
#: from the same work, rounded as published)
PUBLISHED = {
    13: 531_653_418_284_628,
    14: 6_989_320_578_825_358,
    15: 91_365_146_187_124_313,
    16: 1_100_000_000_000_000_000,
    17: 12_000_000_000_000_000_000,
    18: 29_000_000_000_000_000_000,
    19: 1_500_000_000_000_000_000,
    20: 490_000_000,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(README_PICTURE))
    args = parser.parse_args()

    rng = random.Random(args.seed)
    states = [cubefleet.position(rng.randrange(cubefleet.N_STATES)) for _ in range(args.count)]
    start = time.perf_counter()
    df = cubefleet.solve_many(states, max_length=20).to_pandas()
    seconds = time.perf_counter() - start
    print(f"{len(df)} random states in {seconds:.1f} s ({len(df) / seconds:,.0f}/s)")
    print(df["status"].value_counts().to_string())

    found = df["length"].value_counts(normalize=True).sort_index() * 100
    total = sum(PUBLISHED.values())
    lengths = range(13, 22)
    optimal = pd.Series({l: PUBLISHED.get(l, 0) / total * 100 for l in lengths})
    found = found.reindex(lengths, fill_value=0)
    print(pd.DataFrame({"two-phase, target 20 (%)": found, "optimal, published (%)": optimal})
          .round(2).to_string())

    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.4
    ax.bar([l - width / 2 for l in lengths], optimal, width, label="optimal (published)")
    ax.bar([l + width / 2 for l in lengths], found, width,
           label=f"cubefleet two-phase, target 20 ({len(df):,} random states)")
    ax.set_xticks(list(lengths))
    ax.set_xlabel("solution length (half turns)")
    ax.set_ylabel("% of positions")
    ax.set_title("Solution lengths of random states")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
