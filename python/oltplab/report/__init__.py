"""Text reports: sysbench's formats (sysbench_text) and oltplab's own summary (oltplab_text)."""
