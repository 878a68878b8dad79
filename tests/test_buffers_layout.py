"""Database buffers per request pass the ratio floor and a layout allowance in pages per shared
statement call (judge/buffers_layout.py); the estimated cost's floor takes it too."""

from test_gate import WEIGHTS, comparison, load_figure

from benchwatch.figures.metrics import COST, DB_BUFFERS, INSTRUCTIONS, SYSCALLS, Counted
from benchwatch.judge.buffers_layout import FROM_LAYOUT, LAYOUT_PAGES_PER_CALL, shared_calls
from benchwatch.judge.judged import judged_rows
from benchwatch.judge.verdict import EXIT_OK, EXIT_REGRESSION
from benchwatch.report.comment import render

USER = 'SELECT … FROM "user" WHERE "user".id = $1::UUID'
COUNT = "SELECT … FROM (SELECT item.id FROM item WHERE item.owner_id = $1::UUID) …"
LIST = "SELECT … FROM item WHERE item.owner_id = $1::UUID ORDER BY item.title LIMIT $2::INTEGER"
PLANS = {
    USER: "Index Scan using user_pkey on user",
    COUNT: "Index Only Scan using ix_item_owner_id on item",
    LIST: "Bitmap Heap Scan on item + Bitmap Index Scan on ix_item_owner_id",
}


def items_list(pages: dict[str, float], calls: dict[str, float] | None = None, plans=None):
    """GET /api/v1/items/'s buffers detail as counts/database_work.py writes it: pages per
    request by statement, calls per request by statement and plan."""
    calls = calls or dict.fromkeys(pages, 1.0)
    plans = {**PLANS, **(plans or {})}
    return {**pages, **{f"plan {s}: {plans[s]}": n for s, n in calls.items()}}


def judged(base_buffers, head_buffers, base_detail, head_detail, instructions=1e5):
    """Rows as compare makes them (the cost weighed, every floor set); a cheap server by default,
    so the database is a large share of the cost."""

    def side(buffers, detail):
        return [
            load_figure("GET /items", INSTRUCTIONS, [instructions] * 3, Counted()),
            load_figure("GET /items", SYSCALLS, [2.0] * 3, Counted(), {"sendto": 1, "read": 1}),
            load_figure("GET /items", DB_BUFFERS, [buffers] * 3, Counted(), detail),
        ]

    rows, _ = judged_rows(
        side(base_buffers, base_detail), side(head_buffers, head_detail), None, WEIGHTS
    )
    return {r.metric: r for r in rows}, rows


BOOT_26 = items_list({USER: 3, COUNT: 7, LIST: 16})  # runs 06 and 09 of the no-op series
BOOT_22 = items_list({USER: 3, COUNT: 5, LIST: 14})


def test_another_boots_layout_is_quiet_in_the_buffers_and_in_the_cost() -> None:
    by_metric, rows = judged(26.0, 22.0, BOOT_26, BOOT_22)
    buffers, cost = by_metric[DB_BUFFERS.key], by_metric[COST.key]
    assert buffers.low > 1.0 / 1.1 or buffers.high < 1.0  # the ranges apart, past 10 %
    assert (buffers.verdict, buffers.floor_source) == ("unchanged", FROM_LAYOUT)
    assert buffers.floor == round(6 / 22, 5)  # 2 pages x 3 calls, over the smaller median
    # the database is ~38 % of this cost, which moves 6.5 %: on the buffers' 10 % its floor would
    # be ~4.3 % (u 0.5 % + s 2 % + d 10 %) and the cost would flag the layout
    assert 1 / cost.ratio - 1 > 0.06
    assert (cost.verdict, cost.floor_source) == ("unchanged", "parts") and cost.floor > 0.065
    assert comparison(rows).exit_code() == EXIT_OK
    assert "(layout: 2 pages × 3 statement calls = 6 pages/request) |" in render(comparison(rows))


def test_the_same_move_with_two_statement_calls_is_still_quiet_four_pages_are_its_allowance() -> (
    None
):
    two = {USER: 0.0}
    base = items_list({COUNT: 9, LIST: 17}, {COUNT: 1, LIST: 1})
    head = items_list({COUNT: 7, LIST: 15}, {COUNT: 1, LIST: 1})
    assert shared_calls({k: [base.get(k), head.get(k)] for k in {*base, *head, *two}}) == 2
    by_metric, _ = judged(26.0, 22.0, base, head)
    assert by_metric[DB_BUFFERS.key].verdict == "unchanged"
    # one page more per call than the allowance: a change
    by_metric, _ = judged(26.0, 21.0, base, head)
    assert by_metric[DB_BUFFERS.key].verdict == "improvement"


def test_without_calls_per_statement_there_is_no_allowance() -> None:
    by_metric, _ = judged(26.0, 22.0, {}, {})  # no plan lines: the 10 % floor alone, as before
    assert (by_metric[DB_BUFFERS.key].verdict, by_metric[DB_BUFFERS.key].floor_source) == (
        "improvement",
        "default",
    )


def test_a_dropped_primary_key_still_flags_3_to_147() -> None:
    lookup = "SELECT … FROM items WHERE id = $1"
    base = {lookup: 3.0, f"plan {lookup}: Index Scan using items_pkey on items": 1.0}
    head = {lookup: 147.0, f"plan {lookup}: Seq Scan on items": 1.0}
    by_metric, rows = judged(3.0, 147.0, base, head)
    buffers = by_metric[DB_BUFFERS.key]
    assert (buffers.verdict, buffers.floor_source) == ("regression", FROM_LAYOUT)
    assert buffers.floor == round(LAYOUT_PAGES_PER_CALL / 3, 5)
    assert by_metric[COST.key].verdict == "regression"
    assert comparison(rows).exit_code() == EXIT_REGRESSION
    assert "(layout: 2 pages × 1 statement call = 2 pages/request) |" in render(comparison(rows))


def test_an_n_plus_one_flags_its_new_calls_bring_no_allowance() -> None:
    head = items_list({USER: 177, COUNT: 5, LIST: 14}, {USER: 59, COUNT: 1, LIST: 1})
    by_metric, _ = judged(22.0, 196.0, BOOT_22, head)
    buffers = by_metric[DB_BUFFERS.key]
    assert buffers.floor == round(6 / 22, 5)  # the user lookup counts once: base's one call
    assert buffers.verdict == "regression" and by_metric[COST.key].verdict == "regression"
    # a smaller N+1: 3 lookups more, 9 pages more, past the 6 pages' allowance
    head = items_list({USER: 12, COUNT: 5, LIST: 14}, {USER: 4, COUNT: 1, LIST: 1})
    assert judged(22.0, 31.0, BOOT_22, head)[0][DB_BUFFERS.key].verdict == "regression"


def test_a_plan_that_reads_more_pages_per_call_than_the_allowance_flags() -> None:
    base = items_list({USER: 3, COUNT: 5, LIST: 14})
    head = items_list({USER: 3, COUNT: 5, LIST: 24}, plans={LIST: "Index Scan using ix on item"})
    by_metric, _ = judged(22.0, 32.0, base, head)  # 10 pages more on 3 calls
    assert by_metric[DB_BUFFERS.key].verdict == "regression"


def test_other_figures_keep_their_floors() -> None:
    by_metric, _ = judged(26.0, 22.0, BOOT_26, BOOT_22)
    assert by_metric[INSTRUCTIONS.key].floor_source == "default"
    assert by_metric[SYSCALLS.key].floor_source == "default"
    assert by_metric[COST.key].floor_source == "parts"


def test_the_costs_floor_takes_the_allowance_over_each_sides_own_buffers() -> None:
    """A head whose buffers grew tenfold (a dropped index) widens the cost's floor by its 2 pages a
    call over its own buffers, not over base's: 6 pages on 339 a request, not on 22."""
    lookup = {LIST: "Seq Scan on item", COUNT: "Seq Scan on item"}
    head = items_list({USER: 3, COUNT: 168, LIST: 168}, plans=lookup)
    by_metric, _ = judged(22.0, 339.0, BOOT_22, head, instructions=1e7)
    cost, buffers = by_metric[COST.key], by_metric[DB_BUFFERS.key]
    assert buffers.verdict == "regression" and buffers.floor == round(6 / 22, 5)
    base_us, head_us = (sum(v[i] or 0.0 for v in cost.detail.values()) for i in (0, 1))
    database = cost.detail["database buffers"]
    assert database[1] is not None and database[0] is not None
    # the database term of the wider side: its share x max(10 %, 6 pages / its buffers)
    widest = max(database[0] / base_us * (6 / 22), database[1] / head_us * 0.10)
    assert cost.floor <= round(0.005 + 0.02 + widest, 5)  # u f_I + s f_S at most, + d f_D
    assert cost.floor < database[1] / head_us * (6 / 22)  # not head's share x base's floor
    assert cost.verdict == "regression"
