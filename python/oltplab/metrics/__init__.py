"""Host and server metrics sampled on a run's own interval grid (system.csv, server.csv).

The sampler is driven by the engine's interval events: each event's `t_s` becomes the `t_s`
of one row in each file, so the rows line up with intervals.csv exactly (docs/labs.md says
why the sampler lives here rather than in the engine's reporter)."""

from oltplab.metrics.sampler import METRIC_KINDS, MetricsSampler, parse_metrics

__all__ = ["METRIC_KINDS", "MetricsSampler", "parse_metrics"]
