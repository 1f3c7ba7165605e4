"""The cells of the A/B scripts' summary tables (benchsuite/echo/ab_clients.sh,
benchsuite/http/ab_clients.sh, which run their summary with PYTHONPATH=benchsuite/lib)."""
import statistics


def number(x):
    """A raw.tsv cell as a float; None if the run failed (FAIL) or left it empty."""
    try:
        return float(x)
    except ValueError:
        return None


def ratio_cell(q):
    """Per-round ratios as "median x [min-max]", the rounds that have none left out."""
    q = [x for x in q if x]
    return f"{statistics.median(q):.3f}x [{min(q):.3f}-{max(q):.3f}]" if q else "n/a"
