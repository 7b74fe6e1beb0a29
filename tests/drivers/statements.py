"""What sysbench 1.0.20 sends per event, workload by workload, with its default options
(../shared/reference/sysbench.md §1.5-1.6): the numbers the server-side counters are
compared with. Written out by hand from sysbench's Lua scripts, not derived from the
engine, so that the tests check the engine against sysbench and not against itself."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PerEvent:
    """Statements per event by SQL verb, and how a connection prepares them."""

    select: int = 0
    update: int = 0
    delete: int = 0
    insert: int = 0
    # BEGIN ... COMMIT around the event: oltp_read_only, oltp_read_write, oltp_write_only.
    transaction: bool = False
    # Statements prepared per table (sysbench's prepare_for_each_table) and once per
    # connection (BEGIN, COMMIT; select_random_*'s single statement). oltp_insert and
    # bulk_insert send text (con:query) and prepare nothing.
    prepared_per_table: int = 0
    prepared_once: int = 0
    # Every statement reads its table once (one index or sequential scan in PostgreSQL's
    # pg_stat_user_tables); False where the plan decides (a BitmapOr counts one index
    # scan per range).
    one_scan_per_statement: bool = True

    @property
    def begin_commit(self) -> int:
        return 1 if self.transaction else 0

    @property
    def statements(self) -> int:
        """Statements per event, BEGIN and COMMIT included."""
        return self.select + self.update + self.delete + self.insert + 2 * self.begin_commit

    @property
    def scanning(self) -> int:
        """Statements per event that read a table: every one but INSERT, BEGIN and COMMIT."""
        return self.select + self.update + self.delete

    def prepared(self, tables: int) -> int:
        return self.prepared_per_table * tables + self.prepared_once

    def server_transactions(self) -> int:
        """Transactions per event: one around the event, else one per statement
        (autocommit)."""
        return 1 if self.transaction else self.statements


# point_selects=10; simple, sum, order and distinct ranges 1 each; index_updates=1,
# non_index_updates=1, delete_inserts=1.
OLTP: dict[str, PerEvent] = {
    "oltp_read_only": PerEvent(
        select=14, transaction=True, prepared_per_table=5, prepared_once=2
    ),
    "oltp_read_write": PerEvent(
        select=14, update=2, delete=1, insert=1, transaction=True,
        prepared_per_table=9, prepared_once=2,
    ),
    "oltp_write_only": PerEvent(
        update=2, delete=1, insert=1, transaction=True, prepared_per_table=4, prepared_once=2
    ),
    "oltp_point_select": PerEvent(select=1, prepared_per_table=1),
    "oltp_update_index": PerEvent(update=1, prepared_per_table=1),
    "oltp_update_non_index": PerEvent(update=1, prepared_per_table=1),
    "oltp_insert": PerEvent(insert=1),
    "oltp_delete": PerEvent(delete=1, prepared_per_table=1),
    "select_random_points": PerEvent(select=1, prepared_once=1),
    "select_random_ranges": PerEvent(select=1, prepared_once=1, one_scan_per_statement=False),
}  # fmt: skip


def tables_for(workload: str) -> int:
    """The tests' --tables: two where sysbench allows it, so that statements spread over
    tables; select_random_* read sbtest1 only."""
    return 1 if workload.startswith("select_random") else 2
