"""`oltplab check tpcc [--db URL] [--tables N] [--json]` (without --db: the default SQLite
database of `prepare`/`run`): TPC-C's consistency conditions
(clause 3.3.2.1-12), each with pass/fail and the rows that break it; exit 1 on a failure."""

import json

from oltplab import runner
from oltplab._types import Json
from oltplab.catalog import load_catalog
from oltplab.cli import exitcodes
from oltplab.cli.parser import parse_verb
from oltplab.exceptions import ConfigError


def report_text(result: Json) -> str:
    lines = [f"TPC-C consistency conditions (clause 3.3.2), {result['driver']}:"]
    for c in result["conditions"]:
        status = {"pass": "PASS", "fail": "FAIL", "expected": "n/a "}[c["status"]]
        where = f"set {c['table_set']} " if result["table_sets"] > 1 else ""
        offending = f"  ({c['offending']} offending)" if c["offending"] else ""
        note = (
            "  (deliveries have run: holds only before the first)"
            if c["status"] == "expected"
            else ""
        )
        lines.append(f"  {status} {where}{c['number']:>2}. {c['description']}{offending}{note}")
    lines.append("all conditions hold" if result["passed"] else "CONSISTENCY CHECK FAILED")
    return "\n".join(lines) + "\n"


def main(args: list[str]) -> int:
    as_json = "--json" in args
    args = [a for a in args if a != "--json"]
    parsed = parse_verb("check", args, load_catalog())
    if parsed is None:
        return exitcodes.OK
    if parsed.workload != "tpcc":
        raise ConfigError(
            f"check supports tpcc only, not {parsed.workload}: `oltplab check tpcc --db URL`"
        )
    result = runner.check(parsed.workload, parsed.db, parsed.options)
    print(
        json.dumps(result, indent=2) if as_json else report_text(result),
        end="\n" if as_json else "",
    )
    return exitcodes.OK if result["passed"] else exitcodes.FAILED
