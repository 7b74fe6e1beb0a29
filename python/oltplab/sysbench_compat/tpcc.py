"""sysbench-tpcc's command line (Percona-Lab/sysbench-tpcc,
`./tpcc.lua ... prepare|run|cleanup|check`): its script options that oltplab's `tpcc` does
not have, its defaults, and its `check` lines. The options it shares (--tables, --scale,
--use_fk, --trx_level) are in the engine's catalogue.
"""

from oltplab._types import Json
from oltplab.sysbench_compat.options import Role, SysbenchOption

WORKLOAD = "tpcc"

# sysbench-tpcc's options with no counterpart here: accepted, with a warning when not its default.
SCRIPT_OPTIONS: dict[str, SysbenchOption] = {
    "force_pk": SysbenchOption(Role.NOT_IMPLEMENTED, default="0"),
    # The purge "card" deletes delivered orders and breaks conditions 8, 9, 10 and 12.
    "enable_purge": SysbenchOption(Role.NOT_IMPLEMENTED, default="no"),
    "report_csv": SysbenchOption(Role.NOT_IMPLEMENTED, default="no"),
    "pgsql_schema": SysbenchOption(Role.NOT_IMPLEMENTED, default="public"),
    "mysql_storage_engine": SysbenchOption(Role.NOT_IMPLEMENTED, default="innodb"),
    "mysql_table_options": SysbenchOption(Role.NOT_IMPLEMENTED, default=""),
    "splittable": SysbenchOption(Role.NOT_IMPLEMENTED, default="no"),
}


# sysbench-tpcc's defaults where oltplab's native `tpcc` differs (its --scale is 100; its
# --use_fk=1 creates the foreign keys, which SQLite cannot add after the load).
def script_defaults(driver: str) -> dict[str, str]:
    defaults = {"scale": "100"}
    if driver != "sqlite":
        defaults["use_fk"] = "on"
    return defaults


def check_lines(report: Json) -> str:
    """sysbench-tpcc's `check` output shape, one line per condition and table set (its lines
    are per warehouse; oltplab's queries cover a table set's warehouses at once)."""
    lines = []
    for c in report["conditions"]:
        verdict = {
            "pass": "PASSED",
            "fail": "FAILED!!!",
            "expected": "not applicable after deliveries",
        }
        extra = f" ({c['offending']} offending rows)" if c["status"] == "fail" else ""
        lines.append(
            f"Check {c['number']}, table set: {c['table_set']} {verdict[c['status']]}{extra}"
        )
    return "".join(line + "\n" for line in lines)
