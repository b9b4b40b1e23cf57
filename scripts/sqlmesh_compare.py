"""The comparison behind scripts/sqlmesh-compare (run with the SQLMesh venv's python, whose
duckdb reads both tools' database files).

Per project: `sqlmesh plan --auto-apply` and `efmesh apply prod` on two copies at one execution
time, then every view of the prod environment read from each copy's DuckDB files into one
in-memory DuckDB and compared as multisets of rows (EXCEPT ALL both ways) with the same column
names and types; then `sqlmesh test` and `efmesh test`.
"""

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

# DuckDB files: what the tools build in, and what `--fresh` leaves out of the copies (with their
# write-ahead logs)
DATABASE = re.compile(r"\.(duckdb|db)$")
DATABASE_OR_WAL = re.compile(r"\.(duckdb|db)(\.wal)?$")
SKIP_DIRS = {".cache", "logs", "target", ".git", "__pycache__", ".venv"}
# schemas that hold each tool's own tables, not what an environment serves; SQLMesh's state is
# in schema `sqlmesh` too, as `_snapshots` and the like, and a project may name models there
INTERNAL = re.compile(r"^(sqlmesh__.*|_efmesh.*|information_schema|pg_catalog)$")


def copy_project(src: Path, to: Path, fresh: bool) -> None:
    """The project's files; with `fresh`, without the database files it holds (a state file
    an older SQLMesh wrote, which 0.236.4 refuses to read before a migration)."""
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        rel = Path(root).relative_to(src)
        (to / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            if not (fresh and DATABASE_OR_WAL.search(f)):
                shutil.copy2(Path(root) / f, to / rel / f)


def run(cmd, cwd, env=None, timeout=900):
    try:
        p = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        return 124, f"timed out after {timeout} s: {e}"


def first_error(text: str) -> str:
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if re.search(r"error|Error|refused|failed", l):
            return l[:300]
    return (lines[-1] if lines else "")[:300]


def databases(d: Path):
    return sorted(p for p in d.rglob("*") if p.is_file() and DATABASE.search(p.name))


def served_views(d: Path, export_dir: Path):
    """Every view in a non-internal schema of every DuckDB file under `d`: its columns and
    types, and its rows written to a parquet file in `export_dir`."""
    export_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for db in databases(d):
        try:
            con = duckdb.connect(str(db), read_only=True)
        except Exception:
            continue  # a SQLite file or another tool's file
        try:
            catalog = con.execute("SELECT current_database()").fetchone()[0]
            # attach the other files of the copy under their names, as the configs do
            for other in databases(d):
                if other != db:
                    try:
                        con.execute(f"ATTACH '{other}' AS \"{other.stem}\" (READ_ONLY)")
                    except Exception:
                        pass
            views = con.execute(
                "SELECT schema_name, view_name FROM duckdb_views() "
                "WHERE NOT internal AND database_name = ?",
                [catalog],
            ).fetchall()
            for schema, view in views:
                if INTERNAL.match(schema) or (schema == "sqlmesh" and view.startswith("_")):
                    continue
                name = f"{schema}.{view}"
                try:
                    rel = con.sql(f'SELECT * FROM "{catalog}"."{schema}"."{view}"')
                    cols = list(zip(rel.columns, [str(t) for t in rel.types]))
                    data = export_dir / f"{len(out)}.parquet"
                    rel.write_parquet(str(data))
                    out[name] = (cols, data)
                except Exception as e:
                    out[name] = (None, str(e).splitlines()[0][:200])
        finally:
            con.close()
    return out


def compare(ours, theirs):
    """Per view: 'equal', or what differs."""
    cmp = duckdb.connect()
    result = {}
    for name in sorted(set(ours) | set(theirs)):
        if name not in theirs:
            result[name] = "only efmesh serves it"
            continue
        if name not in ours:
            result[name] = "missing in efmesh"
            continue
        (ecols, edata), (scols, sdata) = ours[name], theirs[name]
        if ecols is None or scols is None:
            result[name] = f"unreadable: {edata if ecols is None else sdata}"
            continue
        if [c for c, _ in ecols] != [c for c, _ in scols]:
            result[name] = f"columns differ: efmesh {ecols} sqlmesh {scols}"
            continue
        # with other types, the rows are compared in SQLMesh's types
        casts = ", ".join(f'TRY_CAST("{c}" AS {t}) AS "{c}"' for c, t in scols)
        cmp.execute(f"CREATE OR REPLACE TEMP VIEW e AS SELECT {casts} FROM '{edata}'")
        cmp.execute(f"CREATE OR REPLACE TEMP VIEW s AS SELECT * FROM '{sdata}'")
        extra = cmp.execute(
            "SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM s)"
        ).fetchone()[0]
        lacking = cmp.execute(
            "SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM e)"
        ).fetchone()[0]
        n = cmp.execute("SELECT count(*) FROM s").fetchone()[0]
        if extra or lacking:
            result[name] = f"rows differ: {extra} only in efmesh, {lacking} only in sqlmesh (of {n})"
        elif ecols != scols:
            other = [f"{c} {t} (sqlmesh {st})" for (c, t), (_, st) in zip(ecols, scols) if t != st]
            result[name] = "same rows, types differ: " + ", ".join(other)
        else:
            result[name] = "equal"
    return result


def sqlmesh_tests(text: str):
    m = re.search(r"Ran `?(\d+)`? [Tt]ests?", text)
    ran = int(m.group(1)) if m else 0
    # 0.236 ends with "**Failed tests (N):**" when some fail
    f = re.search(r"Failed tests \((\d+)\)", text)
    return ran, int(f.group(1)) if f else 0


def one(project: Path, args, scratch: Path):
    report = {"project": str(project)}
    s_dir, e_dir = scratch / "sqlmesh", scratch / "efmesh"
    copy_project(project, s_dir, args.fresh)
    copy_project(project, e_dir, args.fresh)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S")
    rc, out = run(
        [args.sqlmesh, "plan", "--auto-apply", "--no-prompts", "--execution-time", stamp],
        s_dir,
    )
    report["sqlmesh_built"] = rc == 0
    if rc != 0:
        report["sqlmesh_error"] = first_error(out)
    env = dict(os.environ, EFMESH_NOW=now.strftime("%Y-%m-%dT%H:%M:%SZ"), NO_COLOR="1")
    rc, out = run([args.efmesh, "apply", "prod", "--yes"], e_dir, env=env)
    report["efmesh_built"] = rc == 0
    if rc != 0:
        report["efmesh_error"] = first_error(out)
    if report["sqlmesh_built"]:
        report["tables"] = compare(
            served_views(e_dir, scratch / "rows-efmesh"),
            served_views(s_dir, scratch / "rows-sqlmesh"),
        )
    if (project / "tests").is_dir() and any((project / "tests").rglob("*.y*ml")):
        rc, out = run([args.sqlmesh, "test"], s_dir)
        s_ran, s_failed = sqlmesh_tests(out)
        rc_e, out_e = run([args.efmesh, "test", "--json"], e_dir, env=env)
        try:
            tests = json.loads(out_e)
            e_results = {
                t["name"]: t["status"] for t in tests.get("tests", []) if "name" in t
            }
        except Exception:
            e_results = None
        report["tests"] = {
            "sqlmesh_ran": s_ran,
            "sqlmesh_failed": s_failed,
            "efmesh_exit": rc_e,
            "efmesh": e_results if e_results is not None else first_error(out_e),
        }
    return report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sqlmesh", required=True)
    ap.add_argument("--efmesh")
    ap.add_argument("--json")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies")
    ap.add_argument(
        "--fresh", action="store_true", help="leave the projects' database files out of the copies"
    )
    ap.add_argument("projects", nargs="+", type=Path)
    args = ap.parse_args()
    if not args.efmesh:
        target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache/efmesh-target"))
        args.efmesh = str(Path(target) / "debug/efmesh")
    reports = []
    totals = dict(equal=0, types=0, differ=0, missing=0, tests_pass=0, tests_fail=0)
    for project in args.projects:
        scratch = Path(tempfile.mkdtemp(prefix="sqlmesh-compare-"))
        try:
            r = one(project.resolve(), args, scratch)
        finally:
            if args.keep:
                print(f"  scratch: {scratch}", file=sys.stderr)
            else:
                shutil.rmtree(scratch, ignore_errors=True)
        reports.append(r)
        tables = r.get("tables", {})
        eq = sum(1 for v in tables.values() if v == "equal")
        miss = sum(1 for v in tables.values() if v == "missing in efmesh")
        types = sum(1 for v in tables.values() if v.startswith("same rows"))
        totals["equal"] += eq
        totals["types"] += types
        totals["missing"] += miss
        totals["differ"] += len(tables) - eq - miss - types
        line = f"{project}: sqlmesh {'built' if r['sqlmesh_built'] else 'FAILED'}, efmesh {'built' if r['efmesh_built'] else 'FAILED'}; tables {eq}/{len(tables)} equal, {types} with the same rows in other types"
        t = r.get("tests")
        if t:
            e = t["efmesh"]
            if isinstance(e, dict):
                ok = sum(1 for s in e.values() if s == "passed")
                totals["tests_pass"] += ok
                totals["tests_fail"] += len(e) - ok
                line += f"; tests sqlmesh {t['sqlmesh_ran'] - t['sqlmesh_failed']}/{t['sqlmesh_ran']} pass, efmesh {ok}/{len(e)} pass"
            else:
                totals["tests_fail"] += max(t["sqlmesh_ran"], 1)
                line += f"; efmesh test failed: {e}"
        print(line)
        for k in ("sqlmesh_error", "efmesh_error"):
            if k in r:
                print(f"  {k}: {r[k]}")
        for v, what in tables.items():
            if what != "equal":
                print(f"  {v}: {what}")
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=2))
    print(
        f"{len(reports)} projects: {totals['equal']} tables equal, {totals['types']} same rows in other types, {totals['differ']} differ, "
        f"{totals['missing']} missing; {totals['tests_pass']} tests pass, {totals['tests_fail']} fail"
    )
    bad = totals["types"] + totals["differ"] + totals["missing"] + totals["tests_fail"]
    bad += sum(1 for r in reports if r["sqlmesh_built"] and not r["efmesh_built"])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
