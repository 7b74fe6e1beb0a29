"""`oltplab import`: sysbench 1.0.x's text output read back into a run directory, so that
existing results can be analysed and compared (docs/sysbench-compat.md)."""

from oltplab.sysbench_import.parse import SysbenchLog, parse_log
from oltplab.sysbench_import.write import write_run

__all__ = ["SysbenchLog", "parse_log", "write_run"]
