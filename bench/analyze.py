"""Benchmark of the analyses on synthetic long tables of 42,000, 420,000 and 1,000,000 rows.

Run: ``.venv/bin/python bench/analyze.py`` (options: ``--sizes``, ``--r-sizes``,
``--sm-sizes``, ``--no-r``).  For every size it measures, each in a fresh
subprocess so that peak memory belongs to that task alone:

agreement + PSS
    what ``robustness analyze`` does for them: one validation of the table
    (``robustness.core.table.validate`` on the columns used), prompt sets, C_i,
    Table 2, S_i and PSS.  The validation's share is shown separately.
GEE + Wald II/III
    validation, agreement flags, separation check, the exchangeable GEE with
    robust covariance (treatment and sum coding) and both Wald tables.
statsmodels
    ``GEE.from_formula(...).fit()`` on the same rows (design building + fit, no
    Wald tests), the "raw statsmodels" reference; its coefficients are compared
    with ours.
geepack (when ``Rscript`` with geepack and car is installed)
    ``geeglm`` + ``car::Anova`` type 2 and 3 on the same rows, timed inside R
    (``tests/r/gee_bench.R``); its chi-square values are compared with ours.

Seconds are wall-clock; "peak MB" is the process's peak resident set during
the task (VmHWM after resetting it through /proc/self/clear_refs; the table
itself, loaded before, is included), "+MB" the growth above the RSS before the
task.  BLAS is pinned to one thread (OPENBLAS_NUM_THREADS=1 etc., unless set):
issue 4 saw OpenBLAS with 2 threads make some fits 6x slower on 2 cores.  On
this project's 2-core machine no such slowdown was measured for these fits
(our GEE + Wald + marginal means on 420k rows: 0.45 s with 1 thread, 0.30 s
with 2; statsmodels on 42k rows: 0.70 s and 0.65 s) -- the GEE here does only
small p x p dense algebra -- so the pin is a precaution, not a need.  Nothing
is asserted: this prints numbers side by side.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

N_MODELS, N_VARIANTS, N_DATASETS = 4, 5, 4
ROWS_PER_ITEM = N_MODELS * (1 + 8 * N_VARIANTS)  # per dataset item, all models


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# ----------------------------------------------------------------------------- workers


def _gee_rows(table):
    """The rows the GEE fits, with the agreement flag and the item cluster (for sm and R)."""
    from analyses import agreement_rows

    r = agreement_rows(table)
    d = r[(r.category != "original") & r.valid.astype(bool)].copy()
    d["agree"] = d["agree"].astype(int)
    d["cluster_id"] = d["dataset"].astype(str) + "/" + d["item_id"].astype(str)
    d = d.sort_values("cluster_id", kind="stable")
    return d[["model", "dataset_type", "category", "cluster_id", "agree"]].reset_index(drop=True)


def worker(task: str, table_path: str, extra: str | None) -> dict:
    import pandas as pd
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    from analyses.agreement import items_frame, summarize_agreement
    from analyses.gee import gee
    from analyses.prompt_sets import prompt_sets
    from analyses.pss import _pss_items, summarize_pss
    from analyses.table_input import k_columns, load

    table = pd.read_parquet(table_path)
    out: dict = {"rows": len(table)}
    if task in ("statsmodels", "r"):
        data = _gee_rows(table)
        del table
    base = _rss_mb("VmRSS")
    exact = _reset_peak()
    t0 = time.perf_counter()
    if task == "agree_pss":
        t = load(table, optional=("gold", "correct", "scale", *k_columns(table)))
        out["validate_s"] = time.perf_counter() - t0
        ps = prompt_sets(t)
        summarize_agreement(items_frame(ps))
        summarize_pss(_pss_items(ps)[0])
    elif task == "gee":
        fit = gee(table)
        w2, w3 = fit.wald(2), fit.wald(3)
        out["iterations"] = fit.iterations
        out["wald2"] = dict(zip(w2.term, w2.chi2, strict=True))
        out["wald3"] = dict(zip(w3.term, w3.chi2, strict=True))
        out["params"] = fit.params.to_dict()
    elif task == "statsmodels":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = smf.gee(
                "agree ~ model + dataset_type * category + model:category",
                groups="cluster_id",
                data=data,
                family=sm.families.Binomial(),
                cov_struct=sm.cov_struct.Exchangeable(),
            )
            res = model.fit(ctol=1e-10, maxiter=100, ddof_scale=0)
        names = [
            n.replace("[T.", "").replace("]", "").replace("Intercept", "(Intercept)")
            for n in res.params.index
        ]
        out["params"] = dict(zip(names, res.params.to_numpy().tolist(), strict=True))
    elif task == "r":
        folder = Path(extra)
        csv = folder / "gee_data.csv"
        data.to_csv(csv, index=False)
        res_csv = folder / "r_out.csv"
        cmd = ["Rscript", str(ROOT / "tests" / "r" / "gee_bench.R"), str(csv), str(res_csv)]
        if shutil.which("time") or Path("/usr/bin/time").exists():
            cmd = ["/usr/bin/time", "-f", "MAXRSS_KB %M", *cmd]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(run.stderr[-2000:])
        ref = pd.read_csv(res_csv, keep_default_na=False)
        out["r_seconds"] = float(ref.loc[ref.quantity == "seconds", "value"].iloc[0])
        for q in ("wald2_chi2", "wald3_chi2"):
            x = ref[ref.quantity == q]
            out[q] = dict(zip(x.name, x.value.astype(float), strict=True))
        for line in run.stderr.splitlines():
            if line.startswith("MAXRSS_KB"):
                out["r_peak_mb"] = int(line.split()[1]) / 1024.0
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = _rss_mb("VmHWM") if exact else float("nan")
    out["base_mb"] = base
    return out


# ----------------------------------------------------------------------------- driver


def _run_worker(task: str, table: Path, extra: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--worker", task, "--table", str(table)]
    if extra:
        cmd += ["--extra", extra]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1] if run.stderr else "failed"}
    return json.loads(run.stdout.strip().splitlines()[-1])


def _r_available() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript not found"
    probe = subprocess.run(
        ["Rscript", "-e", "library(geepack); library(car)"], capture_output=True, text=True
    )
    return None if probe.returncode == 0 else "geepack or car missing"


def _max_rel(a: dict, b: dict) -> float:
    keys = [k for k in a if k in b]
    if not keys:
        return float("nan")
    return max(abs(a[k] - b[k]) / abs(b[k]) for k in keys)


def _fmt(x, spec: str) -> str:
    if x is None or (isinstance(x, float) and x != x):
        width = int(spec.split(".")[0] or 0)
        return "-".rjust(width)
    return format(x, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="42000,420000,1000000")
    ap.add_argument("--sm-sizes", default="42000,420000", help="sizes for raw statsmodels")
    ap.add_argument("--r-sizes", default="42000,420000", help="sizes for geepack")
    ap.add_argument("--no-r", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--table")
    ap.add_argument("--extra")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.table, args.extra), default=float))
        return

    from analyses.synthetic import synthetic_table
    from robustness.core.table import write_parquet

    sizes = [int(s) for s in args.sizes.split(",") if s]
    sm_sizes = {int(s) for s in args.sm_sizes.split(",") if s}
    r_sizes = {int(s) for s in args.r_sizes.split(",") if s}
    r_reason = "--no-r" if args.no_r else _r_available()
    print(
        f"bench/analyze.py: {os.cpu_count()} CPU(s), BLAS threads "
        f"{os.environ['OPENBLAS_NUM_THREADS']}; R: {r_reason or 'geepack + car'}"
    )
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            n_items = max(1, round(size / (N_DATASETS * ROWS_PER_ITEM)))
            table = synthetic_table(
                models=N_MODELS, n_items=n_items, n_variants=N_VARIANTS, with_probs=False, seed=size
            )
            path = Path(tmp) / f"t{size}.parquet"
            write_parquet(table, path, {"bench": size})
            rows = len(table)
            del table
            row = {"size": size, "rows": rows}
            print(f"  {rows:>9,d} rows: agreement + PSS ...", end="", flush=True)
            row["ap"] = _run_worker("agree_pss", path)
            print(" GEE ...", end="", flush=True)
            row["gee"] = _run_worker("gee", path)
            if size in sm_sizes:
                print(" statsmodels ...", end="", flush=True)
                row["sm"] = _run_worker("statsmodels", path)
            if size in r_sizes and not r_reason:
                print(" geepack ...", end="", flush=True)
                row["r"] = _run_worker("r", path, tmp)
            print(" done", flush=True)
            results.append(row)

    print()
    head = (
        f"{'rows':>10} | {'agree+PSS s':>11} {'(valid. s)':>10} {'peak MB':>8} {'+MB':>6} | "
        f"{'GEE+Wald s':>10} {'peak MB':>8} {'+MB':>6} | {'statsm. s':>9} {'ratio':>6} | "
        f"{'geepack s':>9} {'peak MB':>8} {'ratio':>6}"
    )
    print(head)
    print("-" * len(head))
    checks = []
    for row in results:
        ap, ge = row["ap"], row["gee"]
        sm, r = row.get("sm", {}), row.get("r", {})
        for name, part in (("agreement+PSS", ap), ("GEE", ge), ("statsmodels", sm), ("R", r)):
            if "error" in part:
                checks.append(f"{row['rows']:,d} rows: {name} failed: {part['error']}")
        g_s = ge.get("seconds")
        nan = float("nan")
        ap_grow = ap.get("peak_mb", nan) - ap.get("base_mb", nan)
        ge_grow = ge.get("peak_mb", nan) - ge.get("base_mb", nan)
        print(
            f"{row['rows']:>10,d} | {_fmt(ap.get('seconds'), '11.2f')} "
            f"{_fmt(ap.get('validate_s'), '10.2f')} {_fmt(ap.get('peak_mb'), '8.0f')} "
            f"{_fmt(ap_grow, '6.0f')} | "
            f"{_fmt(g_s, '10.2f')} {_fmt(ge.get('peak_mb'), '8.0f')} "
            f"{_fmt(ge_grow, '6.0f')} | "
            f"{_fmt(sm.get('seconds'), '9.2f')} "
            f"{_fmt(sm['seconds'] / g_s if sm.get('seconds') and g_s else None, '6.1f')} | "
            f"{_fmt(r.get('r_seconds'), '9.2f')} {_fmt(r.get('r_peak_mb'), '8.0f')} "
            f"{_fmt(r['r_seconds'] / g_s if r.get('r_seconds') and g_s else None, '6.1f')}"
        )
        if sm.get("params") and ge.get("params"):
            checks.append(
                f"{row['rows']:,d} rows: coefficients vs statsmodels, max rel. diff "
                f"{_max_rel(ge['params'], sm['params']):.1e}"
            )
        if r.get("wald2_chi2") and ge.get("wald2"):
            checks.append(
                f"{row['rows']:,d} rows: Wald chi2 vs geepack + car, max rel. diff "
                f"II {_max_rel(ge['wald2'], r['wald2_chi2']):.1e}, "
                f"III {_max_rel(ge['wald3'], r['wald3_chi2']):.1e}"
            )
    print()
    print("ratio = their seconds / our GEE + Wald II/III seconds (statsmodels: fit only, no Wald).")
    print(
        "targets: agreement + PSS on 1M rows <= 10 s; GEE + Wald II/III on 420k rows <= 10 s "
        "and <= 2 GB."
    )
    for c in checks:
        print("check:", c)


if __name__ == "__main__":
    main()
