"""sysbench logs for the import tests: the real 1.0.20 outputs in tests/sysbench_compat/golden/
and synthetic variants in sysbench's exact formats (reference/sysbench.md §2.5-2.7)."""

from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "sysbench_compat" / "golden"


def golden(name: str) -> str:
    return (GOLDEN / f"{name}.txt").read_text()


BANNER = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"

# --rate=200 --report-interval=1 --rand-seed=42, in the preamble order of sysbench's source.
RATE = f"""{BANNER}

Running the test with following options:
Number of threads: 4
Report intermediate results every 1 second(s)
Target transaction rate: 200/sec
Initializing random number generator from seed (42).


Initializing worker threads...

Threads started!

[ 1s ] thds: 4 tps: 198.93 qps: 3984.55 (r/w/o: 2789.04/797.72/397.86) lat (ms,95%): 3.55 err/s: 0.00 reconn/s: 0.00
[ 1s ] queue length: 0, concurrency: 1
[ 2s ] thds: 4 tps: 203.01 qps: 4057.26 (r/w/o: 2841.18/810.05/406.03) lat (ms,95%): 3.43 err/s: 1.00 reconn/s: 0.00
[ 2s ] queue length: 3, concurrency: 4
SQL statistics:
    queries performed:
        read:                            5628
        write:                           1608
        other:                           804
        total:                           8040
    transactions:                        402    (200.78 per sec.)
    queries:                             8040   (4015.62 per sec.)
    ignored errors:                      1      (0.50 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0022s
    total number of events:              402

Latency (ms):
         min:                                    1.02
         avg:                                    2.21
         max:                                   12.87
         95th percentile:                        3.49
         sum:                                  888.42

Threads fairness:
    events (avg/stddev):           100.5000/2.29
    execution time (avg/stddev):   0.2221/0.01

"""  # noqa: E501

# oltplab's sub-second extension, --percentile=90 (no standard column), Lua's `err/s` without
# a colon; cut short: the log ends inside the final report.
SUB_SECOND_CUT = f"""{BANNER}

Running the test with following options:
Number of threads: 2
Report intermediate results every 0.5 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

[ 0.5s ] thds: 2 tps: 1200.00 qps: 24000.00 (r/w/o: 16800.00/4800.00/2400.00) lat (ms,90%): 1.61 err/s 0.00 reconn/s: 0.00
[ 1.0s ] thds: 2 tps: 1310.50 qps: 26210.00 (r/w/o: 18347.00/5242.00/2621.00) lat (ms,90%): 1.55 err/s 2.00 reconn/s: 0.00
[ 1.5s ] thds: 2 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,90%): 0.00 err/s 0.00 reconn/s: 2.00
SQL statistics:
    queries performed:
        read:                            25"""  # noqa: E501

# A run that a fatal error stopped: sysbench prints no final report.
FATAL = f"""{BANNER}

Running the test with following options:
Number of threads: 1
Report intermediate results every 1 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

[ 1s ] thds: 1 tps: 601.00 qps: 12020.00 (r/w/o: 8414.00/2404.00/1202.00) lat (ms,99%): 2.30 err/s: 0.00 reconn/s: 0.00
FATAL: mysql_drv_query() returned error 2013 (Lost connection to MySQL server during query) for query 'COMMIT'
FATAL: `thread_run' function failed: /usr/share/sysbench/oltp_common.lua:405: SQL error, errno = 2013, state = 'HY000': Lost connection to MySQL server during query
"""  # noqa: E501

# Real sysbench 1.0.20 output on a loaded machine (2 threads, --time=3): the first report came
# late, at about 2.94 s, and printed the same rounded time as the second.
LATE_REPORT = f"""{BANNER}

Running the test with following options:
Number of threads: 2
Report intermediate results every 1 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

[ 3s ] thds: 2 tps: 447.44 qps: 8961.70 (r/w/o: 6274.35/1791.46/895.90) lat (ms,95%): 7.70 err/s: 0.34 reconn/s: 0.00
[ 3s ] thds: 2 tps: 502.19 qps: 10010.30 (r/w/o: 7064.12/1941.80/1004.38) lat (ms,95%): 9.91 err/s: 0.00 reconn/s: 0.00
SQL statistics:
    queries performed:
        read:                            18886
        write:                           5393
        other:                           2697
        total:                           26976
    transactions:                        1348   (432.55 per sec.)
    queries:                             26976  (8656.09 per sec.)
    ignored errors:                      1      (0.32 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          3.1158s
    total number of events:              1348

Latency (ms):
         min:                                    0.78
         avg:                                    4.45
         max:                                   76.75
         95th percentile:                        7.70
         sum:                                 6002.59

Threads fairness:
    events (avg/stddev):           674.0000/19.00
    execution time (avg/stddev):   3.0013/0.00
"""  # noqa: E501
